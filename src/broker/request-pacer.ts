// A local limiter in front of a broker: at most `perWindow` calls in any `windowMs`, a minimum spacing
// for paths the broker paces on their own (IBKR: /portfolio/accounts once per 5 s), and a back-off after
// the broker answers 429. A call that would have to wait too long is refused instead of queued, so a
// caller gets a 503 with Retry-After rather than a hung request.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../core/errors.js';

export interface RequestPacerOptions {
  /** Used in messages, e.g. "IBKR gateway". */
  name: string;
  perWindow: number;
  windowMs: number;
  /** Minimum gap between any two calls: spreads a burst evenly, so that latency jitter cannot bunch calls up at the broker. */
  minIntervalMs?: number;
  /** Minimum spacing between two calls of one key (a path), in ms. */
  spacing?: Record<string, number>;
  /** Longest a caller may wait for its slot. */
  maxWaitMs: number;
  /** Back-off after the first refusal without Retry-After; doubles with each further refusal. */
  baseBackOffMs?: number;
  maxBackOffMs?: number;
  now?: () => number;
}

/** What a broker client needs of a pacer: the local one below, or one shared by replicas through Redis. */
export interface Pacer {
  acquire(key?: string): Promise<void>;
  refused(retryAfterSeconds?: number): number;
  succeeded(): void;
  backOffRemainingMs(): number;
  unavailable(reason: string, waitMs: number): ApiError;
}

export class RequestPacer implements Pacer {
  /** Reserved start times, sorted; kept while they can still constrain a new slot. */
  private slots: number[] = [];
  /** When calls actually left (at or after their slots), for `depart`. */
  private departures: number[] = [];
  private readonly lastByKey = new Map<string, number>();
  private backedOffUntil = 0;
  /** No slot before this time (set when taking over from a shared pacer that lost its store). */
  private notBefore = 0;
  private refusals = 0;
  private readonly now: () => number;

  constructor(private readonly options: RequestPacerOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Reserves a slot and waits for it; throws BROKER_UNAVAILABLE when backed off or the wait is too long.
   * A keyed call's spacing counts from the slot it actually got (a queue ahead of it would otherwise
   * shrink the gap to the next one), so it waits for its key's turn before it takes a slot.
   */
  async acquire(key?: string): Promise<void> {
    const { name, maxWaitMs } = this.options;
    const spacing = key === undefined ? undefined : this.options.spacing?.[key];
    for (;;) {
      const now = this.now();
      if (now < this.backedOffUntil) throw this.unavailable(`${name} asked us to slow down`, this.backedOffUntil - now);
      const at = this.nextSlot(now);
      const keyAt = key === undefined || spacing === undefined ? -Infinity : (this.lastByKey.get(key) ?? -Infinity) + spacing;
      if (keyAt > at) {
        if (keyAt - now > maxWaitMs)
          throw this.unavailable(`${name} allows this call once per ${(spacing as number) / 1000} s`, keyAt - now);
        await sleep(keyAt - now);
        continue;
      }
      if (at - now > maxWaitMs) throw this.unavailable(`${name} request pacing is saturated`, at - now);
      // Reserve before waiting so that concurrent callers queue behind this one.
      this.slots.push(at);
      if (key !== undefined && spacing !== undefined) this.lastByKey.set(key, at);
      if (at > now) await sleep(at - now);
      return this.depart(at);
    }
  }

  /**
   * Lets a call whose slot `at` has come go out, unless it came late: a blocked event loop fires the
   * timers of several slots at once, and those calls would leave together. Then it waits until the call
   * keeps the spacing and the window against the calls that actually left.
   */
  async depart(at: number): Promise<void> {
    const { perWindow, windowMs, minIntervalMs = 0 } = this.options;
    for (;;) {
      // Never earlier than the slot, so that a clock standing still in a test never waits.
      const now = Math.max(this.now(), at);
      this.departures = this.departures.filter((t) => t > now - Math.max(windowMs, minIntervalMs));
      const last = this.departures.at(-1);
      let earliest = last === undefined ? now : last + minIntervalMs;
      if (this.departures.length >= perWindow)
        earliest = Math.max(earliest, (this.departures[this.departures.length - perWindow] as number) + windowMs);
      if (earliest <= now) {
        this.departures.push(now);
        return;
      }
      await sleep(earliest - now);
    }
  }

  /** The broker refused (429): stop sending until Retry-After, or an escalating back-off with jitter. Returns the wait in ms. */
  refused(retryAfterSeconds?: number): number {
    this.refusals += 1;
    const base = this.options.baseBackOffMs ?? 5_000;
    const max = this.options.maxBackOffMs ?? 600_000;
    const escalated = Math.min(max, base * 2 ** (this.refusals - 1));
    const waitMs =
      retryAfterSeconds !== undefined && retryAfterSeconds > 0
        ? retryAfterSeconds * 1000
        : Math.round(escalated * (1 + Math.random() * 0.2));
    this.backedOffUntil = Math.max(this.backedOffUntil, this.now() + waitMs);
    return waitMs;
  }

  succeeded(): void {
    this.refusals = 0;
  }

  /** Sends nothing before `at`, without refusing: later callers queue behind it. */
  pauseUntil(at: number): void {
    this.notBefore = Math.max(this.notBefore, at);
  }

  /** Stops sending until `until` (a back-off another replica learnt of). */
  backOffUntil(until: number): void {
    this.backedOffUntil = Math.max(this.backedOffUntil, until);
  }

  /** Reserved slot times still inside the window (to hand over to a shared pacer). */
  recentSlots(): number[] {
    return this.slots.filter((t) => t > this.now() - this.options.windowMs);
  }

  /** Milliseconds until calls may be sent again after a refusal; 0 when not backed off. */
  backOffRemainingMs(): number {
    return Math.max(0, this.backedOffUntil - this.now());
  }

  unavailable(reason: string, waitMs: number): ApiError {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new ApiError('BROKER_UNAVAILABLE', `${reason}; retry in ${seconds} s`, { retryAfterSeconds: seconds });
  }

  /** Slots stay sorted: each is at least the previous one, and at least `windowMs` after the one `perWindow` back. */
  private nextSlot(now: number): number {
    const { perWindow, windowMs } = this.options;
    const keep = Math.max(windowMs, this.options.minIntervalMs ?? 0);
    this.slots = this.slots.filter((t) => t > now - keep);
    const last = this.slots.at(-1);
    let at = Math.max(this.notBefore, last === undefined ? now : Math.max(now, last + (this.options.minIntervalMs ?? 0)));
    if (this.slots.length >= perWindow) at = Math.max(at, (this.slots[this.slots.length - perWindow] as number) + windowMs);
    return at;
  }
}
