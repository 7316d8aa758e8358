// One ioredis connection shared by the cache, budgets, locks and rate limits. Commands fail fast while
// Redis is away (no offline queue, one retry), so a lost Redis costs a request microseconds, never a
// hang; ioredis reconnects by itself with backoff, and `ready` tells the budget guards to resynchronise.
import { EventEmitter, once } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type RedisState = 'connecting' | 'ready' | 'down';

export interface RedisConnectionOptions {
  url: string;
  /** Every key this service writes starts with it, so replicas of one deployment share and others don't. */
  keyPrefix: string;
  logger: Logger;
  /** Per-command deadline; a slow Redis is treated like a lost one. */
  commandTimeoutMs?: number;
}

export class RedisConnection extends EventEmitter {
  readonly client: Redis;
  readonly prefix: string;
  private current: RedisState = 'connecting';
  private changedAt = new Date();
  private error: string | null = null;
  private readonly logger: Logger;

  constructor(options: RedisConnectionOptions) {
    super();
    this.prefix = options.keyPrefix;
    this.logger = options.logger;
    this.client = new Redis(options.url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2_000,
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      // Reconnect forever, backing off to 2 s: Redis coming back must need no restart.
      retryStrategy: (times) => Math.min(100 * times, 2_000),
      reconnectOnError: () => false,
    });
    this.client.on('ready', () => this.enter('ready'));
    this.client.on('error', (error: Error) => {
      this.error = describe(error);
    });
    this.client.on('close', () => this.enter('down'));
    this.client.on('end', () => this.enter('down'));
  }

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

  async close(): Promise<void> {
    this.client.removeAllListeners('error');
    this.client.on('error', () => {});
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private enter(state: RedisState): void {
    if (state === this.current) return;
    const was = this.current;
    this.current = state;
    this.changedAt = new Date();
    if (state === 'ready') this.logger.info({ was }, 'redis connected');
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
