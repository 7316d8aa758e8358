// Cross-replica single flight: one short Redis lock per key (SET NX PX with a random token), released
// by compare-and-delete so a lock that outlived its holder is never freed by someone else's release.
import { randomBytes } from 'node:crypto';
import { ApiError, type ErrorCode } from '../core/errors.js';
import type { SharedStore } from '../store/degraded-mode.js';

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
  /** The words for callers the broker rules do not admit (ApiError.publicMessage); absent in a failure stored before it. */
  publicMessage?: string;
  retryAfterSeconds?: number;
}

export class RedisFlightLock implements FlightLock {
  constructor(private readonly shared: SharedStore) {}

  private key(key: string): string {
    return this.shared.redis.key(`lock:${key}`);
  }

  tryAcquire(key: string, ttlMs: number): Promise<LockAttempt> {
    const token = randomBytes(12).toString('base64url');
    return this.shared.degraded.attempt(
      'flight-lock',
      async (client): Promise<LockAttempt> =>
        (await client.set(this.key(key), token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK'
          ? { kind: 'acquired', token }
          : { kind: 'held' },
      () => ({ kind: 'unavailable' }),
    );
  }

  /** A release that fails only delays the next loader by the lock's TTL: it expires by itself. */
  async release(key: string, token: string): Promise<void> {
    await this.shared.degraded.attempt(
      'flight-lock',
      (client) => client.eval(RELEASE, 1, this.key(key), token),
      () => 0,
    );
  }

  /** undefined when Redis cannot tell. */
  isHeld(key: string): Promise<boolean | undefined> {
    return this.shared.degraded.attempt(
      'flight-lock',
      async (client) => (await client.exists(this.key(key))) === 1,
      () => undefined,
    );
  }

  async recordFailure(key: string, error: ApiError): Promise<void> {
    const stored: StoredFailure = {
      at: Date.now(),
      code: error.code,
      message: error.message,
      publicMessage: error.publicMessage,
      retryAfterSeconds: error.retryAfterSeconds,
    };
    await this.shared.degraded.attempt(
      'flight-lock',
      (client) => client.set(this.shared.redis.key(`failed:${key}`), JSON.stringify(stored), 'PX', FAILURE_TTL_MS),
      () => null,
    );
  }

  async failureSince(key: string, since: number): Promise<ApiError | undefined> {
    const text = await this.shared.degraded.attempt(
      'flight-lock',
      (client) => client.get(this.shared.redis.key(`failed:${key}`)),
      () => null,
    );
    if (text === null) return undefined;
    const stored = JSON.parse(text) as StoredFailure;
    if (stored.at < since) return undefined;
    return new ApiError(stored.code, stored.message, {
      publicMessage: stored.publicMessage,
      ...(stored.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: stored.retryAfterSeconds }),
    });
  }
}
