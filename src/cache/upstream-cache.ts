// The one path every upstream read takes: fresh hit, stale-while-revalidate, stale-if-error, and single
// flight so that concurrent misses for one key share one upstream call, in this process and (with a
// flight lock) across replicas.
//
// Tiers: L1 is in-process and read synchronously, so a fresh hit costs a map lookup and no await. L2
// (SQLite or Redis) holds the last good value until its stale window ends; it is read on an L1 miss and
// written through on every successful load.
//
// Four verbs, each with one meaning: `fetch` answers from the cache and loads only on a miss; `peek` reads
// whatever is stored and never loads; `load` calls the upstream now, one call per key however many ask at
// once (in this process and, with the lock, across replicas); `refresh` loads in place of a stale value
// and never fails: the stale value stays when it cannot.
//
// "Not found": an upstream's answer that it has no data for the key (NotFoundAnswerError) is remembered for
// CACHE_NOT_FOUND_SECONDS in both tiers, so every replica answers it again, same code and message, without a
// call. It is kept under a key of its own (notFoundKey), never in place of the value: a good value in its
// stale window goes on being served where it was served before, and the negative only spares the calls that
// would have been sent. Limit answers, failures and budget refusals are other errors, never remembered.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { currentCallers } from '../core/caller.js';
import { ApiError, CallerShareSpentError, NotFoundAnswerError, type RememberedNotFound } from '../core/errors.js';
import type { UpstreamHealth } from '../health/upstream-health.js';
import {
  type CacheEntry,
  type CacheResult,
  type CacheStatus,
  type CacheStore,
  type CacheWindow,
  isFresh,
  isServable,
  makeEntry,
} from './cache-store.js';
import type { FlightLock } from './flight-lock.js';
import type { MemoryCacheStore } from './memory-cache-store.js';
import { TieredCacheStore } from './tiered-cache-store.js';

export interface UpstreamCacheOptions {
  memory: MemoryCacheStore;
  logger: Logger;
  health: UpstreamHealth;
  /** Second tier (SQLite or Redis); without it only L1 is used. */
  l2?: CacheStore;
  /** Cross-replica single flight (Redis); without it single flight is per process. */
  lock?: FlightLock;
  /** Lock lifetime: long enough for one upstream call including its pacing wait. */
  lockTtlMs?: number;
  /** How long a replica waits for another replica's load before giving up (504). */
  lockWaitMs?: number;
  /** Upper bound of the pause after a failed background refresh (the fresh window caps it too). */
  refreshBackoffMs?: number;
  /** How long an upstream's "not found" is remembered (CACHE_NOT_FOUND_SECONDS); 0 or unset: not at all. */
  notFoundMs?: number;
}

export interface FetchOptions {
  /** Which upstream the loader calls, for status, metrics and its circuit breaker. */
  upstream: string;
  /** false when the loader is an aggregate whose own upstream calls are guarded one by one. */
  breaker?: boolean;
  /**
   * Wait for a stale entry's refresh rather than answer stale at once (a stream's poller wants the new
   * value, not the old one again). The refresh is the same single-flight load a request would start; if
   * it fails or is paused after a failure, the stale entry is the answer, as it would be for a request.
   */
  revalidate?: boolean;
}

type Load<T> = () => Promise<T>;

const MAX_BLOCKED_KEYS = 10_000;

/** What a remembered "not found" holds: its message (the code is always SYMBOL_NOT_FOUND). */
interface NotFoundValue {
  message: string;
}

/**
 * Where the "not found" of `key` is kept. A prefix, not a suffix: every value key starts with its upstream's
 * scope (`sandbox:`, `live:`), so no value key, whatever a caller typed into it, can ever be read as one.
 */
function notFoundKey(key: string): string {
  return `not-found:${key}`;
}

export class UpstreamCache {
  private readonly tiers: TieredCacheStore;
  private readonly logger: Logger;
  private readonly health: UpstreamHealth;
  private readonly lock: FlightLock | undefined;
  private readonly lockTtlMs: number;
  private readonly lockWaitMs: number;
  private readonly refreshBackoffMs: number;
  private readonly notFoundMs: number;
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();
  private readonly misses = new Map<string, Promise<CacheResult<unknown>>>();
  /** Keys whose last background refresh failed, and until when not to try again. */
  private readonly refreshBlocked = new Map<string, number>();
  /** `notFound`: calls not sent because the upstream's "not found" for the key was remembered. */
  readonly counters = {
    hit: 0,
    miss: 0,
    stale: 0,
    notFound: 0,
    singleFlightWaits: 0,
    crossReplicaWaits: 0,
    refreshes: 0,
    refreshFailures: 0,
  };

  constructor(options: UpstreamCacheOptions) {
    this.tiers = new TieredCacheStore(options.memory, options.l2);
    this.logger = options.logger;
    this.health = options.health;
    this.lock = options.lock;
    this.lockTtlMs = options.lockTtlMs ?? 15_000;
    this.lockWaitMs = options.lockWaitMs ?? this.lockTtlMs;
    this.refreshBackoffMs = options.refreshBackoffMs ?? 5_000;
    this.notFoundMs = options.notFoundMs ?? 0;
  }

  /** Both tiers; `size` and `calculatedSize` report the in-process tier. */
  get store(): TieredCacheStore {
    return this.tiers;
  }

  async fetch<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheResult<T>> {
    const now = Date.now();
    const cached = this.tiers.getSync<T>(key);
    if (cached !== undefined && isFresh(cached, now)) {
      this.counters.hit += 1;
      return { entry: cached, status: 'HIT' };
    }
    if (cached !== undefined && isServable(cached, now)) {
      if (options.revalidate === true) return this.refreshOrStale(key, window, load, options, cached);
      this.counters.stale += 1;
      this.refresh(key, window, load, options);
      return { entry: cached, status: 'STALE' };
    }
    const result = await this.fetchMiss(key, window, load, options);
    this.count(result.status);
    return result;
  }

  /**
   * The value under `key` whatever its age, without loading: L1 when fresh, else L2 (another replica may
   * have stored a newer one), else a stale L1 entry. For callers that choose between sources themselves.
   */
  async peek<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const local = this.tiers.getSync<T>(key);
    if (local !== undefined && isFresh(local, Date.now())) return local;
    return (await this.tiers.getL2<T>(key)) ?? local;
  }

  /** Counts an answer that a caller of peek/load served, as fetch counts its own. */
  count(status: CacheStatus): void {
    this.counters[status === 'HIT' ? 'hit' : status === 'STALE' ? 'stale' : 'miss'] += 1;
  }

  /** L1 missed: look in L2, then load, with every concurrent caller sharing the one attempt. */
  private fetchMiss<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheResult<T>> {
    const pending = this.misses.get(key);
    if (pending !== undefined) {
      this.counters.singleFlightWaits += 1;
      return joined(pending as Promise<CacheResult<T>>, () => this.fetchMiss(key, window, load, options));
    }
    const promise = (async (): Promise<CacheResult<T>> => {
      const found = await this.tiers.getL2<T>(key);
      const now = Date.now();
      if (found !== undefined && isFresh(found, now)) return { entry: found, status: 'HIT' };
      if (found !== undefined && isServable(found, now)) {
        this.refresh(key, window, load, options);
        return { entry: found, status: 'STALE' };
      }
      return { entry: await this.load(key, window, load, options), status: 'MISS' };
    })().finally(() => this.misses.delete(key));
    this.misses.set(key, promise);
    return promise;
  }

  /** Starts a refresh in the background unless one is running or the last one failed moments ago. */
  refresh<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): void {
    if (this.inFlight.has(key)) return;
    void this.refreshNow(key, window, load, options);
  }

  /** Waits for the refresh of a stale entry; the stale entry answers when the refresh fails or is paused. */
  private async refreshOrStale<T>(
    key: string,
    window: CacheWindow,
    load: Load<T>,
    options: FetchOptions,
    stale: CacheEntry<T>,
  ): Promise<CacheResult<T>> {
    const entry = await this.refreshNow(key, window, load, options);
    this.counters[entry === undefined ? 'stale' : 'miss'] += 1;
    return entry === undefined ? { entry: stale, status: 'STALE' } : { entry, status: 'MISS' };
  }

  /** One refresh of a stale key, never rejecting: undefined when it failed or is paused after a failure. */
  private async refreshNow<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheEntry<T> | undefined> {
    const blockedUntil = this.refreshBlocked.get(key);
    if (blockedUntil !== undefined) {
      if (Date.now() < blockedUntil) return undefined;
      this.refreshBlocked.delete(key);
    }
    if (!this.inFlight.has(key)) this.counters.refreshes += 1;
    try {
      const entry = await this.load(key, window, load, options);
      this.refreshBlocked.delete(key);
      return entry;
    } catch (error) {
      this.counters.refreshFailures += 1;
      // A dead upstream is not hammered by every request that sees the stale value; a "not found" is not
      // asked again while it is remembered. A caller's spent share sent nothing and says nothing of the upstream:
      // the next caller may refresh at once.
      const remembered = error instanceof NotFoundAnswerError ? error.remembered : undefined;
      const pause =
        error instanceof CallerShareSpentError
          ? 0
          : remembered === undefined
            ? Math.min(this.refreshBackoffMs, window.freshMs)
            : remembered.until - Date.now();
      if (pause > 0) {
        if (this.refreshBlocked.size >= MAX_BLOCKED_KEYS) this.refreshBlocked.clear();
        this.refreshBlocked.set(key, Date.now() + pause);
      }
      this.logger.debug(
        { key, upstream: options.upstream, code: (error as { code?: string }).code },
        'background refresh failed; serving stale',
      );
      return undefined;
    }
  }

  /** Loads now, whatever is cached, sharing the call with concurrent loads of the key (all replicas). */
  load<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheEntry<T>> {
    const pending = this.inFlight.get(key);
    if (pending !== undefined) {
      this.counters.singleFlightWaits += 1;
      return joined(pending as Promise<CacheEntry<T>>, () => this.load(key, window, load, options));
    }
    const promise = this.loadUnlessNotFound(key, window, load, options).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, promise as Promise<CacheEntry>);
    return promise;
  }

  private async loadUnlessNotFound<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheEntry<T>> {
    await this.throwIfNotFound(key, 'HIT');
    return this.lock === undefined
      ? this.callAndStore(key, window, load, options)
      : this.loadWithLock(key, window, load, options, this.lock);
  }

  /** Throws the upstream's "not found" for `key` while it is remembered (this tier, else the shared one). */
  private async throwIfNotFound(key: string, cache: RememberedNotFound['cache']): Promise<void> {
    if (this.notFoundMs === 0) return;
    const entry = await this.peek<NotFoundValue>(notFoundKey(key));
    if (entry === undefined || !isFresh(entry, Date.now())) return;
    this.counters.notFound += 1;
    throw new NotFoundAnswerError(entry.value.message, { until: entry.freshUntil, cache });
  }

  /** Keeps the upstream's "not found" in both tiers, and gives it back as remembered. */
  private async remember(key: string, error: NotFoundAnswerError): Promise<NotFoundAnswerError> {
    if (this.notFoundMs === 0) return error;
    const entry = makeEntry<NotFoundValue>({ message: error.message }, { freshMs: this.notFoundMs, staleMs: 0 });
    await this.tiers.set(notFoundKey(key), entry);
    return new NotFoundAnswerError(error.message, { until: entry.freshUntil, cache: 'MISS' });
  }

  /** One replica loads while the others poll L2 for its value, for at most `lockWaitMs`. */
  private async loadWithLock<T>(
    key: string,
    window: CacheWindow,
    load: Load<T>,
    options: FetchOptions,
    lock: FlightLock,
  ): Promise<CacheEntry<T>> {
    const startedAt = Date.now();
    const deadline = startedAt + this.lockWaitMs;
    for (;;) {
      const attempt = await lock.tryAcquire(key, this.lockTtlMs);
      if (attempt.kind === 'unavailable') return this.callAndStore(key, window, load, options);
      if (attempt.kind === 'acquired') {
        try {
          // Another replica may have stored the value, or its "not found", between our L2 read and our lock.
          const found = await this.tiers.getL2<T>(key);
          if (found !== undefined && isFresh(found, Date.now())) return found;
          await this.throwIfNotFound(key, 'MISS');
          return await this.callAndStore(key, window, load, options);
        } finally {
          await lock.release(key, attempt.token);
        }
      }
      this.counters.crossReplicaWaits += 1;
      const outcome = await this.awaitHolder<T>(key, lock, startedAt, deadline);
      if (outcome === 'unavailable') return this.callAndStore(key, window, load, options);
      if (outcome === 'timeout') throw new ApiError('UPSTREAM_TIMEOUT', 'the upstream did not answer in time');
      if (outcome !== 'released') return outcome;
      await this.throwIfNotFound(key, 'MISS');
      const failure = await lock.failureSince(key, startedAt);
      if (failure !== undefined) throw failure;
      // Released without a value or a recorded failure (the holder died): try to load ourselves.
    }
  }

  private async awaitHolder<T>(
    key: string,
    lock: FlightLock,
    startedAt: number,
    deadline: number,
  ): Promise<CacheEntry<T> | 'released' | 'timeout' | 'unavailable'> {
    let pause = 20;
    while (Date.now() < deadline) {
      await sleep(Math.min(pause, Math.max(1, deadline - Date.now())));
      pause = Math.min(pause * 2, 200);
      const found = await this.tiers.getL2<T>(key);
      if (found !== undefined && (isFresh(found, Date.now()) || found.storedAt >= startedAt)) return found;
      const held = await lock.isHeld(key);
      if (held === undefined) return 'unavailable';
      if (!held) {
        // The holder writes the value before it releases: one more look closes that race.
        const last = await this.tiers.getL2<T>(key);
        return last !== undefined && (isFresh(last, Date.now()) || last.storedAt >= startedAt) ? last : 'released';
      }
    }
    return 'timeout';
  }

  private async callAndStore<T>(key: string, window: CacheWindow, load: Load<T>, options: FetchOptions): Promise<CacheEntry<T>> {
    let value: T;
    try {
      // Health records the outcome (a budget refusal is no upstream failure) and the circuit breaker
      // fails fast while the upstream is known to be down.
      value = await this.health.track(options.upstream, load, { breaker: options.breaker });
    } catch (error) {
      const failure = error instanceof NotFoundAnswerError ? await this.remember(key, error) : error;
      // Replicas waiting on this flight fail with its outcome rather than each retry the upstream; a caller's
      // spent share is its own, so they try on their own account instead.
      if (failure instanceof ApiError && !(failure instanceof CallerShareSpentError)) await this.lock?.recordFailure(key, failure);
      throw failure;
    }
    const entry = makeEntry(value, window);
    await this.tiers.set(key, entry);
    return entry;
  }
}

/**
 * A single flight another caller started: its outcome, unless it was refused for that caller's spent share,
 * which is not this caller's to share (fair-share.ts): this caller then tries on its own account.
 */
function joined<R>(pending: Promise<R>, retry: () => Promise<R>): Promise<R> {
  const mine = currentCallers();
  return pending.catch((error: unknown) => {
    if (error instanceof CallerShareSpentError && !mine.some((caller) => error.accounts.includes(caller.account))) return retry();
    throw error;
  });
}
