// The service's own check that its Redis clients follow the deployment, whatever the client library
// does: on a timer it asks the Sentinels (or a Cluster node) which primaries they name (primary-probe.ts)
// and looks at every client the service keeps (commands, the relays' pub/sub). A client is replaced when
//   ended      ioredis will never reconnect it (it was ended, or gave up): at once
//   away       it stays disconnected while the named primary answers us
//   elsewhere  it stays connected to a primary the Sentinels no longer name (one that hangs rather than
//              closing our socket: ioredis waits on it for as long as the socket stays open)
// "away" and "elsewhere" must last GRACE_MS and two checks, so that ioredis's own reconnection has its
// chance first and a rescue is counted only when one was needed. Every rescue is reported to the owner of
// the clients, which hands its users the new client, counts and logs it.
// A Cluster client whose slot map names other primaries than the Cluster does reloads it at once: ioredis
// reloads it only when a command meets a moved slot or a closed node, and a slot nobody asks for would keep
// a lost primary in the map. That is upkeep, not a rescue: it is not counted.
import { Cluster } from 'ioredis';
import type { RedisTarget } from '../core/config.js';
import { type NamedPrimaries, namedPrimaries } from './primary-probe.js';
import { type ClientPurpose, primariesInUse, type RedisClient } from './redis-client-factory.js';

export type ClientFault = 'ended' | 'away' | 'elsewhere';

/** A client the watch looks after: whoever owns it hands its users the replacement. */
export interface WatchedClient {
  readonly purpose: ClientPurpose;
  readonly client: RedisClient;
  /** A fresh client in this one's place, for every user of it. */
  replace(): void;
}

export interface PrimaryWatchOptions {
  target: RedisTarget;
  intervalMs: number;
  /** Deadline of each question to a Sentinel or node. */
  timeoutMs: number;
  rescued: (client: WatchedClient, fault: ClientFault, named: string[] | null) => void;
}

/**
 * How long "away" or "elsewhere" must last: ioredis's longest reconnection of its own (a 2 s backoff, then
 * a 2 s connect deadline) with a margin; a hung primary's socket is ended by ioredis within 2 s more.
 */
const GRACE_MS = 5_000;

/**
 * What is wrong with a client at one check, if anything; whether the named primary answers is asked only when it matters.
 * @internal
 */
export async function faultOf(
  client: { status: string; inUse: string[] },
  named: NamedPrimaries | undefined,
): Promise<ClientFault | undefined> {
  if (client.status === 'end') return 'ended';
  // Nobody answers: ioredis's own retries are all there is to do.
  if (named === undefined) return undefined;
  const onNamed = named.uses(client.inUse);
  if (client.status === 'ready' && onNamed) return undefined;
  if (!(await named.reachable())) return undefined;
  return client.status === 'ready' ? 'elsewhere' : 'away';
}

export class PrimaryWatch {
  /** Per client, the fault seen at the last check: since when, and at how many checks in a row. */
  private readonly clients = new Map<WatchedClient, { fault: ClientFault | undefined; since: number; checks: number }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastNamed: string[] | null = null;

  constructor(private readonly options: PrimaryWatchOptions) {}

  /** The primaries the deployment named at the last check that got an answer (null for a single node or before). */
  get named(): string[] | null {
    return this.lastNamed;
  }

  /** Looks after `client` until the returned function is called. */
  watch(client: WatchedClient): () => void {
    this.clients.set(client, { fault: undefined, since: 0, checks: 0 });
    return () => this.clients.delete(client);
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.clients.clear();
  }

  /** One check of every client (a check still running is joined, not doubled). */
  private check(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    const known = [...this.clients.keys()].flatMap((w) => (w.client instanceof Cluster ? primariesInUse(w.client) : []));
    const named = await namedPrimaries(this.options.target, this.options.timeoutMs, known);
    if (named !== undefined) this.lastNamed = named.primaries;
    for (const [watched, record] of this.clients) {
      const { client } = watched;
      const fault = await faultOf({ status: client.status, inUse: primariesInUse(client) }, named);
      // Closed by its owner meanwhile (its end is no fault), or the watch stopped.
      if (!this.clients.has(watched)) continue;
      if (fault === 'elsewhere' && client instanceof Cluster) {
        client.refreshSlotsCache();
        continue;
      }
      if (fault !== record.fault) Object.assign(record, { fault, since: Date.now(), checks: 0 });
      record.checks += 1;
      const lasting = record.checks >= 2 && Date.now() - record.since >= GRACE_MS;
      if (fault === undefined || (fault !== 'ended' && !lasting)) continue;
      Object.assign(record, { fault: undefined, since: 0, checks: 0 });
      watched.replace();
      this.options.rescued(watched, fault, named?.primaries ?? null);
    }
  }
}
