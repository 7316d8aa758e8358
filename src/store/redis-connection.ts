// One ioredis client shared by the cache, budgets, locks, rate limits and stream relays (redis-client-factory.ts
// says how each topology is reached). Users ask for `client` at each use rather than keep it: when the
// primary watch (primary-watch.ts) finds it ended or stuck while the deployment names a primary that
// answers, the client is replaced, and the next command of every user goes to the new one. The relays'
// pub/sub clients (redis-subscriber.ts) are watched and replaced the same way. Each rescue is counted
// (`rescues`) and logged: ioredis is trusted to follow a failover, and checked.
//
// Replication is asynchronous: a primary that took over, or a node restarted empty, may lack the last
// writes. Each primary's `run_id` (INFO server) says which one answers; a change is a failover, counted
// and announced (`failover`) so that the degraded-mode policy (degraded-mode.ts) has every replica write
// back what it remembers before the shared ledgers are trusted again.
import { createHash } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisTarget } from '../core/config.js';
import { type ClientFault, PrimaryWatch, type WatchedClient } from './primary-watch.js';
import { addressOf, createClient, type RedisClient } from './redis-client-factory.js';
import { RedisSubscriber } from './redis-subscriber.js';

export type { RedisClient } from './redis-client-factory.js';
export type RedisState = 'connecting' | 'ready' | 'down';
export type RedisKind = RedisTarget['kind'];

export interface RedisConnectionOptions {
  target: RedisTarget;
  /** Every key this service writes starts with it, so replicas of one deployment share and others don't. */
  keyPrefix: string;
  logger: Logger;
  /** Per-command deadline; a slow Redis is treated like a lost one. */
  commandTimeoutMs?: number;
  /** How often the primary watch asks the deployment which primary it names (primary-watch.ts). */
  checkMs?: number;
}

/** What a rescue did, as status and the log say it. */
const RESCUES: Record<ClientFault, string> = {
  ended: 'had ended (ioredis would not reconnect it)',
  away: 'stayed disconnected while the named primary answered',
  elsewhere: 'stayed on a primary the Sentinels no longer name',
};

export class RedisConnection extends EventEmitter {
  readonly kind: RedisKind;
  readonly prefix: string;
  private current: RedisState = 'connecting';
  private changedAt = new Date();
  private error: string | null = null;
  private readonly logger: Logger;
  /** The primaries' run ids as last read (hashed), and which addresses they answer on. */
  private identity: string | undefined;
  private primaryAddresses: string | null = null;
  private failoverCount = 0;
  private lastFailover: Date | null = null;
  private checking: Promise<void> | undefined;
  private readonly target: RedisTarget;
  private readonly commandTimeoutMs: number;
  private active: RedisClient;
  private readonly watch: PrimaryWatch;
  private rescueCount = 0;
  private latestRescue: { at: Date; reason: string } | null = null;

  constructor(options: RedisConnectionOptions) {
    super();
    this.prefix = options.keyPrefix;
    this.logger = options.logger;
    this.kind = options.target.kind;
    this.target = options.target;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1_000;
    this.active = this.attach(createClient(this.target, this.commandTimeoutMs, 'commands'));
    this.watch = new PrimaryWatch({
      target: this.target,
      intervalMs: options.checkMs ?? 5_000,
      timeoutMs: this.commandTimeoutMs,
      rescued: (client, fault, named) => this.rescued(client, fault, named),
    });
    const connection = this;
    this.watch.watch({
      purpose: 'commands',
      get client() {
        return connection.active;
      },
      replace: () => this.replace(),
    });
    this.watch.start();
  }

  /** The client to send commands with now: ask at each use, never keep it (it is replaced when it cannot recover). */
  get client(): RedisClient {
    return this.active;
  }

  /**
   * `name` under the prefix. A name starting with `{tag}` keeps the braces: every key of one concept
   * instance (a ledger, a pacer, a lease) shares its tag, so a script over them runs on one Cluster slot.
   */
  key(name: string): string {
    return this.prefix + name;
  }

  get state(): RedisState {
    return this.current;
  }

  get ready(): boolean {
    return this.current === 'ready';
  }

  get since(): Date {
    return this.changedAt;
  }

  get lastError(): string | null {
    return this.error;
  }

  /** The primary (or, on a Cluster, the primaries) commands go to, as host:port; null before the first. */
  get primary(): string | null {
    return this.primaryAddresses;
  }

  /** Primaries replaced since start: a failover, or a node that came back empty. */
  get failovers(): number {
    return this.failoverCount;
  }

  get lastFailoverAt(): Date | null {
    return this.lastFailover;
  }

  /** Times the primary watch had to step in for a client ioredis did not bring back by itself. */
  get rescues(): number {
    return this.rescueCount;
  }

  get lastRescue(): { at: Date; reason: string } | null {
    return this.latestRescue;
  }

  /** The primary (or primaries) the Sentinels or the Cluster named at the last check; null for one node or before. */
  get namedPrimary(): string | null {
    return this.watch.named?.join(',') ?? null;
  }

  /** Which primaries answer now (a hash of their run ids): a changed epoch means writes may have been lost. */
  get epoch(): string {
    return this.identity ?? '';
  }

  /** Resolves once connected or after `timeoutMs`, whichever is first; never throws. */
  async waitReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return true;
    const timer = AbortSignal.timeout(timeoutMs);
    try {
      await once(this, 'state:ready', { signal: timer });
      return true;
    } catch {
      return false;
    }
  }

  /** Records a failed command: the client may not have noticed yet that the link is gone. */
  noteFailure(error: unknown): void {
    this.error = describe(error);
  }

  /** A pub/sub connection of its own, queueing its (re)subscriptions, watched and replaced like the command client. */
  subscriber(): RedisSubscriber {
    const subscriber: RedisSubscriber = new RedisSubscriber(
      () => createClient(this.target, this.commandTimeoutMs, 'pub/sub'),
      () => unwatch(),
    );
    const unwatch = this.watch.watch(subscriber);
    return subscriber;
  }

  /**
   * Reads the run id of every primary in use; a change from the last reading is a failover. Called on
   * every (re)connection and every heartbeat: a Cluster can promote a replica without dropping our link.
   */
  checkPrimary(): Promise<void> {
    this.checking ??= this.readPrimary().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  async close(): Promise<void> {
    this.watch.stop();
    const client = this.active;
    try {
      await client.quit();
    } catch {
      // Already gone: the disconnect below is all there is to do.
    } finally {
      client.disconnect();
    }
  }

  /** Listens to `client` for as long as it is the one in use; a replaced client's late events change nothing. */
  private attach(client: RedisClient): RedisClient {
    const current = () => client === this.active;
    // `ready` is announced once the primary in use is known, so a failover is seen before anything is shared.
    client.on('ready', () => {
      if (current()) void this.checkPrimary().then(() => current() && this.enter('ready'));
    });
    client.on('error', (error: Error) => {
      if (current()) this.error = describe(error);
    });
    client.on('close', () => current() && this.enter('down'));
    client.on('end', () => current() && this.enter('down'));
    return client;
  }

  private replace(): void {
    const old = this.active;
    this.active = this.attach(createClient(this.target, this.commandTimeoutMs, 'commands'));
    this.checking = undefined;
    old.disconnect();
    // Down until the new client is ready: then the concepts write back and share again, as on any return.
    this.enter('down');
  }

  private rescued(client: WatchedClient, fault: ClientFault, named: string[] | null): void {
    this.rescueCount += 1;
    const reason = `the ${client.purpose} client ${RESCUES[fault]}: replaced`;
    this.latestRescue = { at: new Date(), reason };
    this.logger.warn(
      { client: client.purpose, fault, primary: this.primaryAddresses, named: named?.join(',') ?? null, rescues: this.rescueCount },
      `redis client rescued: ${reason}`,
    );
  }

  private async readPrimary(): Promise<void> {
    let primaries: { address: string; runId: string }[];
    const client = this.client;
    // A Cluster's map between a primary lost and its replica promoted names too few primaries: no reading.
    if (client instanceof Cluster && !servesEverySlot(client)) return;
    try {
      const nodes = client instanceof Cluster ? client.nodes('master') : [client];
      primaries = await Promise.all(
        nodes.map(async (node) => ({ address: addressOf(node), runId: /run_id:(\w+)/.exec(await node.info('server'))?.[1] ?? '' })),
      );
    } catch (error) {
      this.noteFailure(error);
      return;
    }
    primaries.sort((a, b) => a.address.localeCompare(b.address));
    const identity = createHash('sha256')
      .update(primaries.map((p) => p.runId).join(','))
      .digest('hex')
      .slice(0, 16);
    this.primaryAddresses = primaries.map((p) => p.address).join(',');
    const was = this.identity;
    this.identity = identity;
    if (was === undefined || was === identity) return;
    this.failoverCount += 1;
    this.lastFailover = new Date();
    this.logger.warn(
      { primary: this.primaryAddresses, failovers: this.failoverCount },
      'redis primary changed; writing back before sharing',
    );
    this.emit('failover');
  }

  private enter(state: RedisState): void {
    if (state === this.current) return;
    const was = this.current;
    this.current = state;
    this.changedAt = new Date();
    if (state === 'ready') this.logger.info({ was, primary: this.primaryAddresses }, 'redis connected');
    else this.logger.warn({ error: this.error }, 'redis connection lost; using local state until it returns');
    this.emit(`state:${state}`);
    this.emit('state', state);
  }
}

function servesEverySlot(cluster: Cluster): boolean {
  const primaries = new Set(cluster.nodes('master').map((node) => `${node.options.host}:${node.options.port}`));
  return cluster.slots.length > 0 && cluster.slots.every((owners) => owners?.[0] !== undefined && primaries.has(owners[0]));
}

/** An error as a short code or message, without addresses or credentials. */
function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string') return e.code;
  const message = typeof e.message === 'string' ? e.message : 'unknown error';
  return message
    .replace(/\b(?:redis|rediss):\/\/\S+/gi, '<redis>')
    .replace(/\d{1,3}(?:\.\d{1,3}){3}:\d+/g, '<address>')
    .slice(0, 120);
}
