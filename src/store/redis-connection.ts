// One ioredis client shared by the cache, budgets, locks, rate limits and stream relays: a single node
// (REDIS_URL, rediss:// and passwords for managed services), a Cluster (REDIS_CLUSTER_NODES) or a primary
// found through Sentinel (REDIS_SENTINELS), each with ioredis's own support. Commands fail fast while Redis
// is away (no offline queue, one retry), so a lost Redis costs a request microseconds, never a hang;
// ioredis reconnects by itself with backoff (through the Sentinels to whichever primary they name now).
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
import { addressOf, createClient, type RedisClient } from './redis-client-factory.js';

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
}

export class RedisConnection extends EventEmitter {
  readonly client: RedisClient;
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

  constructor(options: RedisConnectionOptions) {
    super();
    this.target = options.target;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1_000;
    this.prefix = options.keyPrefix;
    this.logger = options.logger;
    this.kind = options.target.kind;
    this.client = createClient(options.target, options.commandTimeoutMs ?? 1_000, 'commands');
    // `ready` is announced once the primary in use is known, so a failover is seen before anything is shared.
    this.client.on('ready', () => void this.checkPrimary().then(() => this.enter('ready')));
    this.client.on('error', (error: Error) => {
      this.error = describe(error);
    });
    this.client.on('close', () => this.enter('down'));
    this.client.on('end', () => this.enter('down'));
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

  /** A second client for pub/sub (a subscribed connection can run nothing else), queueing its (re)subscriptions. */
  subscriber(): RedisClient {
    const client = createClient(this.target, this.commandTimeoutMs, 'pub/sub');
    client.on('error', () => {});
    return client;
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
    this.client.removeAllListeners('error');
    this.client.on('error', () => {});
    try {
      await this.client.quit();
    } catch {
      // Already gone: the disconnect below is all there is to do.
    } finally {
      this.client.disconnect();
    }
  }

  private async readPrimary(): Promise<void> {
    let primaries: { address: string; runId: string }[];
    try {
      const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
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
