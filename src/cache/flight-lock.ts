// Cross-replica single flight: one short Redis lock per key (SET NX PX with a random token), released
// by compare-and-delete so a lock that outlived its holder is never freed by someone else's release.
import { randomBytes } from 'node:crypto';
import { ApiError, type ErrorCode } from '../core/errors.js';
import type { RedisConnection } from '../store/redis-connection.js';

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** `held` means another replica is loading; `unavailable` means decide locally (Redis is away). */
export type LockAttempt = { kind: 'acquired'; token: string } | { kind: 'held' } | { kind: 'unavailable' };

export interface FlightLock {
  tryAcquire(key: string, ttlMs: number): Promise<LockAttempt>;
  release(key: string, token: string): Promise<void>;
  isHeld(key: string): Promise<boolean | undefined>;
  /** Leaves a failed load's outcome for the replicas waiting on the same flight (a few seconds only). */
  recordFailure(key: string, error: ApiError): Promise<void>;
  failureSince(key: string, since: number): Promise<ApiError | undefined>;
}

/** Long enough for every waiter to read it, far too short to be mistaken for a cached answer. */
const FAILURE_TTL_MS = 5_000;

interface StoredFailure {
  at: number;
  code: ErrorCode;
  message: string;
  retryAfterSeconds?: number;
}

export class RedisFlightLock implements FlightLock {
  constructor(private readonly redis: RedisConnection) {}

  private key(key: string): string {
    return this.redis.key(`lock:${key}`);
  }

  async tryAcquire(key: string, ttlMs: number): Promise<LockAttempt> {
    if (!this.redis.ready) return { kind: 'unavailable' };
    const token = randomBytes(12).toString('base64url');
    try {
      const ok = await this.redis.client.set(this.key(key), token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
      return ok === 'OK' ? { kind: 'acquired', token } : { kind: 'held' };
    } catch (error) {
      this.redis.noteFailure(error);
      return { kind: 'unavailable' };
    }
  }

  async release(key: string, token: string): Promise<void> {
    try {
      await this.redis.client.eval(RELEASE, 1, this.key(key), token);
    } catch (error) {
      // The lock expires by itself; a failed release only delays the next loader by its TTL.
      this.redis.noteFailure(error);
    }
  }

  /** undefined when Redis cannot tell. */
  async isHeld(key: string): Promise<boolean | undefined> {
    if (!this.redis.ready) return undefined;
    try {
      return (await this.redis.client.exists(this.key(key))) === 1;
    } catch (error) {
      this.redis.noteFailure(error);
      return undefined;
    }
  }

  async recordFailure(key: string, error: ApiError): Promise<void> {
    if (!this.redis.ready) return;
    const stored: StoredFailure = { at: Date.now(), code: error.code, message: error.message, retryAfterSeconds: error.retryAfterSeconds };
    try {
      await this.redis.client.set(this.redis.key(`failed:${key}`), JSON.stringify(stored), 'PX', FAILURE_TTL_MS);
    } catch (failure) {
      this.redis.noteFailure(failure);
    }
  }

  async failureSince(key: string, since: number): Promise<ApiError | undefined> {
    if (!this.redis.ready) return undefined;
    try {
      const text = await this.redis.client.get(this.redis.key(`failed:${key}`));
      if (text === null) return undefined;
      const stored = JSON.parse(text) as StoredFailure;
      if (stored.at < since) return undefined;
      return new ApiError(
        stored.code,
        stored.message,
        stored.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: stored.retryAfterSeconds },
      );
    } catch (failure) {
      this.redis.noteFailure(failure);
      return undefined;
    }
  }
}
