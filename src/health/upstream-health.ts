// What each upstream last did, for /api/system/status, and the circuit breaker in front of each one.
// Reads state; never calls an upstream by itself.
import { ApiError, BudgetExhaustedError, CallerShareSpentError, driftOf, type ErrorCode, PlanRefusalError } from '../core/errors.js';
import { CircuitBreaker, type CircuitBreakerOptions, CircuitOpenError, type CircuitSnapshot } from './circuit-breaker.js';

/** Limits (429) say something about the upstream; every other 4xx is about what the caller asked for. */
const NOT_THE_CALLERS: ReadonlySet<ErrorCode> = new Set(['QUOTA_EXHAUSTED', 'CALLER_SHARE_SPENT', 'RATE_LIMITED']);

/** The caller's own mistake (an unknown symbol, an invalid cursor): never held against an upstream. */
function isCallerError(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && !NOT_THE_CALLERS.has(error.code);
}

export interface UpstreamState {
  calls: number;
  errors: number;
  lastSuccessAt: string | null;
  /** `publicMessage`: the words for callers the broker rules do not admit (ApiError.publicMessage). */
  lastError: { at: string; code: string; message: string; publicMessage: string } | null;
  /** Answers that did not read as the wire format says, by reason: the first sign that a provider changed. */
  unreadable: Record<string, number>;
  lastUnreadable: { at: string; reason: string; message: string } | null;
}

/** Told of every tracked call (metrics histograms hang off it). */
export type UpstreamCallObserver = (upstream: string, ms: number, error?: unknown) => void;

export interface UpstreamHealthOptions {
  /** Breaker settings for every upstream (defaults: 5 failures, 5 s cooldown doubling to 60 s). */
  breaker?: Partial<CircuitBreakerOptions>;
  /** The code a caller sees while an upstream's circuit is open (e.g. BROKER_UNAVAILABLE for a broker). */
  openCode?: (upstream: string) => ErrorCode;
  /** Told of every call sent (the metrics' upstream call histogram). */
  observer?: UpstreamCallObserver;
}

export interface TrackOptions {
  /** false for an aggregate whose own upstream calls are tracked (and guarded) one by one. */
  breaker?: boolean;
}

export class UpstreamHealth {
  private readonly states = new Map<string, UpstreamState>();
  private readonly breakers = new Map<string, CircuitBreaker>();
  private breakerOptions: Partial<CircuitBreakerOptions>;
  private readonly openCode: (upstream: string) => ErrorCode;
  private readonly observer: UpstreamCallObserver | undefined;

  constructor(options: UpstreamHealthOptions = {}) {
    this.breakerOptions = options.breaker ?? {};
    this.openCode = options.openCode ?? (() => 'UPSTREAM_ERROR');
    this.observer = options.observer;
  }

  /** For tests and benchmarks (short cooldowns): applies to breakers not created yet. */
  configureBreakers(options: Partial<CircuitBreakerOptions>): void {
    this.breakerOptions = { ...this.breakerOptions, ...options };
  }

  state(upstream: string): UpstreamState {
    let state = this.states.get(upstream);
    if (state === undefined) {
      state = { calls: 0, errors: 0, lastSuccessAt: null, lastError: null, unreadable: {}, lastUnreadable: null };
      this.states.set(upstream, state);
    }
    return state;
  }

  breaker(upstream: string): CircuitBreaker {
    let breaker = this.breakers.get(upstream);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(upstream, { openCode: this.openCode(upstream), ...this.breakerOptions });
      this.breakers.set(upstream, breaker);
    }
    return breaker;
  }

  /** A real call succeeded, whoever made it (a broker health check too): the upstream answers. */
  recordSuccess(upstream: string): void {
    const state = this.state(upstream);
    state.calls += 1;
    state.lastSuccessAt = new Date().toISOString();
    this.breakers.get(upstream)?.reset();
  }

  recordError(upstream: string, error: unknown): void {
    const state = this.state(upstream);
    state.calls += 1;
    state.errors += 1;
    const safe = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'unexpected failure');
    state.lastError = { at: new Date().toISOString(), code: safe.code, message: safe.message, publicMessage: safe.publicMessage };
  }

  /** An answer that did not read as expected (see driftOf); counted whatever else the call's outcome was. */
  recordDrift(upstream: string, reason: string, message: string): void {
    const state = this.state(upstream);
    state.unreadable[reason] = (state.unreadable[reason] ?? 0) + 1;
    state.lastUnreadable = { at: new Date().toISOString(), reason, message };
  }

  /**
   * Runs one upstream call through the upstream's circuit breaker and records how it went. A call our own
   * budget or the key's plan declined, or the open circuit refused, was never sent: it is no upstream call.
   */
  async track<T>(upstream: string, call: () => Promise<T>, options: TrackOptions = {}): Promise<T> {
    const started = performance.now();
    try {
      const result = options.breaker === false ? await call() : await this.breaker(upstream).run(call);
      this.recordSuccess(upstream);
      this.observer?.(upstream, performance.now() - started);
      return result;
    } catch (error) {
      const drift = driftOf(error);
      if (drift !== undefined) this.recordDrift(upstream, drift, (error as Error).message);
      if (isCallerError(error)) {
        // The upstream answered as it should ("no such symbol") or nothing was sent: not its failure.
        this.state(upstream).calls += 1;
        this.observer?.(upstream, performance.now() - started, error);
      } else if (!notSent(error)) {
        this.recordError(upstream, error);
        this.observer?.(upstream, performance.now() - started, error);
      }
      throw error;
    }
  }

  all(): Record<string, UpstreamState> {
    return Object.fromEntries(this.states);
  }

  /** The circuit of every upstream called so far. */
  circuits(): Record<string, CircuitSnapshot> {
    return Object.fromEntries([...this.breakers].map(([name, breaker]) => [name, breaker.snapshot()]));
  }
}

/** Refused before it was sent: by our own budget, a caller's spent share, the key's plan or the open circuit. */
function notSent(error: unknown): boolean {
  return (
    error instanceof BudgetExhaustedError ||
    error instanceof CallerShareSpentError ||
    error instanceof CircuitOpenError ||
    error instanceof PlanRefusalError
  );
}
