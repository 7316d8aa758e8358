// One circuit breaker per upstream: after a run of failures that mean "the upstream is sick" (transport
// failures, 5xx, unparseable bodies) calls fail fast for a cooldown instead of each waiting out the
// deadline, so the cache serves stale at once and a dead upstream is not hammered. After the cooldown one
// probe is let through; its success closes the circuit, its failure reopens it for longer (capped, with
// jitter so replicas do not probe in step). Caller and data errors, our own budget refusals and upstream
// rate-limit refusals (handled by budget back-off) say nothing about the upstream's health.
import { ApiError, type ErrorCode, UpstreamTransportError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Consecutive sick failures that open the circuit. */
  failureThreshold: number;
  /** First cooldown before a probe; doubles with every failed probe. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** Fraction of the cooldown added or removed at random (0 to 1). */
  jitter: number;
  /** The code callers see while the circuit is open (BROKER_UNAVAILABLE for a broker). */
  openCode: ErrorCode;
  now: () => number;
  random: () => number;
}

const DEFAULT_BREAKER_OPTIONS: CircuitBreakerOptions = {
  failureThreshold: 5,
  cooldownMs: 5_000,
  maxCooldownMs: 60_000,
  jitter: 0.2,
  openCode: 'UPSTREAM_ERROR',
  now: Date.now,
  random: Math.random,
};

export interface CircuitSnapshot {
  state: CircuitState;
  consecutiveFailures: number;
  /** Times the circuit opened since start. */
  opened: number;
  /** Calls refused while open or while a probe was out. */
  rejected: number;
  /** When the next probe may go out (open state), ISO time; null otherwise. */
  nextProbeAt: string | null;
}

/** Thrown instead of calling an upstream whose circuit is open; never reaches the upstream. */
export class CircuitOpenError extends ApiError {
  constructor(
    readonly upstream: string,
    code: ErrorCode,
    retryAfterSeconds: number,
    /** What the operator must fix, when the failures said (an outbound proxy's refusal, a certificate refused). */
    fix?: string,
  ) {
    const paused = `${publicName(upstream)} is failing; calls are paused until it recovers`;
    // The fix names the proxy or a setting: for the operator and local callers, not the public.
    super(code, fix === undefined ? paused : `${paused}: ${fix}`, { retryAfterSeconds, publicMessage: paused });
    this.name = 'CircuitOpenError';
  }
}

const SICK_CODES: ReadonlySet<ErrorCode> = new Set(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT']);

/**
 * Does this failure mean the upstream itself is unwell? Transport failures, 5xx/unparseable bodies and
 * timeouts do, anywhere in the cause chain (adapters rewrap them, e.g. as BROKER_UNAVAILABLE). A broker
 * that is merely logged out or pacing us (BROKER_UNAVAILABLE without such a cause) does not, nor does a
 * refusal for limits (QUOTA_EXHAUSTED) or a caller's own mistake (4xx codes).
 * @internal
 */
export function isSickFailure(error: unknown): boolean {
  if (error instanceof CircuitOpenError) return false;
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof UpstreamTransportError || (e instanceof ApiError && SICK_CODES.has(e.code))) return true;
  }
  if (error instanceof ApiError) return false;
  // Anything unexpected (a parser throwing a TypeError on a strange body) is the upstream's doing.
  return error instanceof Error;
}

/** A proxy's or a certificate's failure (the message says what to change), anywhere in the cause chain. */
function configurationProblem(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof UpstreamTransportError && (e.failure === 'proxy' || e.failure === 'certificate')) return e.message;
  }
  return undefined;
}

export class CircuitBreaker {
  private readonly options: CircuitBreakerOptions;
  private state: CircuitState = 'closed';
  private failures = 0;
  /** Failed probes in a row: sets the next cooldown. */
  private reopenings = 0;
  private openUntil = 0;
  /** Settles when the half-open probe in flight has its answer. */
  private probe: Promise<void> | undefined;
  private opened = 0;
  private rejected = 0;
  /** The last failure's message when it named a setting to fix: repeated while the circuit is open. */
  private fix: string | undefined;

  constructor(
    readonly upstream: string,
    options: Partial<CircuitBreakerOptions> = {},
  ) {
    this.options = { ...DEFAULT_BREAKER_OPTIONS, ...options };
  }

  /**
   * Runs the call unless the circuit is open; throws CircuitOpenError without calling when it is. While
   * the half-open probe is out, other calls wait for its verdict (at most one upstream deadline) rather
   * than fail: a fan-out (the overview's instruments) then heals whole instead of caching a partial answer.
   */
  async run<T>(call: () => Promise<T>): Promise<T> {
    while (this.probe !== undefined) await this.probe;
    const probe = this.admit();
    let settle: (() => void) | undefined;
    if (probe) this.probe = new Promise<void>((resolve) => (settle = resolve));
    try {
      const result = await call();
      this.reset();
      return result;
    } catch (error) {
      if (isSickFailure(error)) {
        this.fix = configurationProblem(error);
        this.onFailure();
      }
      throw error;
    } finally {
      if (probe) {
        this.probe = undefined;
        settle?.();
      }
    }
  }

  snapshot(): CircuitSnapshot {
    this.refresh();
    return {
      state: this.state,
      consecutiveFailures: this.failures,
      opened: this.opened,
      rejected: this.rejected,
      nextProbeAt: this.state === 'open' ? new Date(this.openUntil).toISOString() : null,
    };
  }

  /** Returns true when this call is the half-open probe (no other probe is in flight when called). */
  private admit(): boolean {
    this.refresh();
    if (this.state === 'closed') return false;
    if (this.state === 'half_open') return true;
    this.rejected += 1;
    throw new CircuitOpenError(this.upstream, this.options.openCode, Math.max(1, (this.openUntil - this.options.now()) / 1000), this.fix);
  }

  private refresh(): void {
    if (this.state === 'open' && this.options.now() >= this.openUntil) this.state = 'half_open';
  }

  /** The upstream answered (this call, or another path to it such as a health check): close the circuit. */
  reset(): void {
    this.state = 'closed';
    this.failures = 0;
    this.reopenings = 0;
  }

  private onFailure(): void {
    this.failures += 1;
    if (this.state === 'half_open') {
      this.reopenings += 1;
      this.open();
    } else if (this.state === 'closed' && this.failures >= this.options.failureThreshold) {
      this.open();
    }
    // Already open: a call that started before the circuit opened failed late; the cooldown stands.
  }

  private open(): void {
    const { cooldownMs, maxCooldownMs, jitter, now, random } = this.options;
    const base = Math.min(maxCooldownMs, cooldownMs * 2 ** Math.min(this.reopenings, 30));
    const spread = base * jitter * (random() * 2 - 1);
    this.state = 'open';
    this.openUntil = now() + Math.max(0, Math.min(maxCooldownMs, base + spread));
    this.opened += 1;
  }
}
