// The one degraded-mode policy for everything replicas share through Redis: what each concept does while
// Redis is lost, and what happens when it returns.
//
//   lost (no answer, or a command failed):
//     cache             a miss and a skipped write; the in-process tier and stale answers keep serving
//     flight lock       'unavailable': load locally (at most one duplicate upstream call per replica)
//     budgets, pacing   decide locally at this replica's safe share (the live replicas last seen split what
//                       was left; nothing before the window they cannot see has passed) and remember every
//                       call sent
//     rate limit        in-process windows
//     leases, relays    keep the role held; a replica without the feed polls or snapshots for its own viewers
//     stream tickets    issued and redeemed on this replica only
//     cursor key        paging cursors signed with a key of this replica, kept to verify them once the
//                       shared key is adopted on a return
//   returned (the same primary):
//     every concept that remembered calls writes them back (onReturn), then shares again
//   returned to another primary (a failover, or a node restarted empty: its run id changed):
//     asynchronous replication may have lost the last increments and locks, so budgets and pacing stay
//     local until every live replica has written back what it sent in the open windows (each ledger is
//     then the union of every replica's record, never less than any one of them) and announced it on its
//     heartbeat; the cache, locks, limits, leases, tickets and the cursor key use the new primary at once (a
//     lost lock or lease costs at most one duplicate call, which the budgets still count).
// Each concept asks `shares(concept)`, or runs its commands through `attempt` with its local answer; none
// reads the connection's state itself, so what "lost" means is decided here alone.
import { EventEmitter } from 'node:events';
import type { RedisClient, RedisConnection } from './redis-connection.js';
import { ReplicaHeartbeat } from './replica-heartbeat.js';

/** What a concept shared by replicas needs: the connection, the heartbeat and this policy. */
export interface SharedStore {
  redis: RedisConnection;
  heartbeat: ReplicaHeartbeat;
  degraded: DegradedMode;
}

/** Everything replicas share through Redis, each with its degraded behaviour in the table above. */
export type SharedConcept =
  | 'cache'
  | 'flight-lock'
  | 'budgets'
  | 'pacing'
  | 'rate-limit'
  | 'stream-leases'
  | 'stream-tickets'
  | 'cursor-key';

/** The concepts that count calls against a provider's limits: they wait out a failover's settling. */
const LEDGERS: ReadonlySet<SharedConcept> = new Set(['budgets', 'pacing']);

export class DegradedMode extends EventEmitter {
  private readonly restorers = new Set<() => Promise<void>>();
  /** Local time the current failover was seen; undefined when shared ledgers may be trusted. */
  private settlingSince: number | undefined;
  /** Local time the last failover settled (metrics say how long a replica has been in its mode). */
  private settledAt: number | undefined;
  private writtenBack = '';

  /** The replicas' heartbeat, which announces what this replica has written back after a failover. */
  readonly heartbeat: ReplicaHeartbeat;

  constructor(
    private readonly redis: RedisConnection,
    heartbeatMs?: number,
  ) {
    super();
    this.heartbeat = new ReplicaHeartbeat(redis, heartbeatMs, () => (this.settlingSince === undefined ? redis.epoch : this.writtenBack));
    redis.on('failover', () => void this.failover());
    redis.on('state:ready', () => void this.restore());
    this.heartbeat.on('beat', () => this.settle());
  }

  /** Budgets and pacing may decide in the shared ledgers: Redis answers, and no failover is being settled. */
  get ledgersShared(): boolean {
    return this.redis.ready && this.settlingSince === undefined;
  }

  /** The one answer to "does `concept` use Redis now?" (see the header). */
  shares(concept: SharedConcept): boolean {
    return LEDGERS.has(concept) ? this.ledgersShared : this.redis.ready;
  }

  /**
   * `command` on the shared store when `concept` shares now; else, or when the command fails (noted on the
   * connection, whose state follows), the concept's local answer. Never throws for Redis.
   */
  async attempt<T>(concept: SharedConcept, command: (client: RedisClient) => Promise<T>, local: () => T): Promise<T> {
    if (!this.shares(concept)) return local();
    try {
      return await command(this.redis.client);
    } catch (error) {
      this.redis.noteFailure(error);
      return local();
    }
  }

  /** After a failover: local decisions until every live replica has written back (see the header). */
  get settling(): boolean {
    return this.settlingSince !== undefined;
  }

  /** When the failover being settled was seen, or when the last one settled; undefined before any failover. */
  get settlingChangedAt(): Date | undefined {
    const at = this.settlingSince ?? this.settledAt;
    return at === undefined ? undefined : new Date(at);
  }

  /** Registers how a concept writes back what it decided alone; run on every return, before sharing again. */
  onReturn(restore: () => Promise<void>): () => void {
    this.restorers.add(restore);
    return () => this.restorers.delete(restore);
  }

  private async restore(): Promise<void> {
    await Promise.all([...this.restorers].map((restore) => restore().catch((error: unknown) => this.redis.noteFailure(error))));
  }

  private async failover(): Promise<void> {
    const settlingSince = Date.now();
    this.settlingSince = settlingSince;
    this.emit('settling');
    await this.restore();
    if (this.settlingSince !== settlingSince) return;
    this.writtenBack = this.redis.epoch;
    void this.heartbeat.beat();
  }

  /** Shared again once a beat, a whole interval after the failover, hears every live replica has written back. */
  private settle(): void {
    const since = this.settlingSince;
    if (since === undefined || this.writtenBack !== this.redis.epoch) return;
    if (this.heartbeat.pending > 0 || Date.now() - since < this.heartbeat.intervalMs) return;
    this.settlingSince = undefined;
    this.settledAt = Date.now();
    this.emit('shared');
  }
}
