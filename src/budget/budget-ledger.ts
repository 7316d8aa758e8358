// The pure arithmetic of a budget: given the times of past calls, when may the next one go?
import { type BudgetLimits, DAY_MS, MINUTE_MS } from './budget-guard.js';

export interface LedgerState {
  /** Times of sent (or reserved) calls within the last 24 hours, ascending. */
  calls: number[];
  backedOffUntil: number;
}

export type SlotDecision = { ok: true; at: number } | { ok: false; retryAt: number };

/** Earliest time at or after `now` when one more call fits every limit. */
export function nextSlot(state: LedgerState, limits: BudgetLimits, now: number): number {
  let at = Math.max(now, state.backedOffUntil);
  const last = state.calls[state.calls.length - 1];
  if (limits.minIntervalMs > 0 && last !== undefined) at = Math.max(at, last + limits.minIntervalMs);
  // Once `at` is past the n-th most recent call's window, the window holds fewer than n calls.
  if (limits.perMinute > 0) at = Math.max(at, windowReopens(state.calls, limits.perMinute, minuteOf(limits)));
  if (limits.perDay > 0) at = Math.max(at, windowReopens(state.calls, limits.perDay, dayOf(limits)));
  return at;
}

function windowReopens(calls: number[], limit: number, windowMs: number): number {
  if (calls.length < limit) return 0;
  return (calls[calls.length - limit] as number) + windowMs;
}

export function decide(state: LedgerState, limits: BudgetLimits, now: number, maxWaitMs: number): SlotDecision {
  const at = nextSlot(state, limits, now);
  return at - now <= maxWaitMs ? { ok: true, at } : { ok: false, retryAt: at };
}

/**
 * The provider counts a call when it arrives, we when we send it; a call sent exactly as a window
 * reopens can arrive inside it. Counting each window a little longer (2 %, at most 2 s) absorbs that.
 */
function withMargin(windowMs: number): number {
  return windowMs + Math.min(Math.ceil(windowMs * 0.02), 2_000);
}

/** The minute window as counted (with margin). */
export function minuteOf(limits: BudgetLimits): number {
  return withMargin(limits.minuteMs ?? MINUTE_MS);
}

/** The day window as counted (with margin): a rolling 24 hours, never a calendar day. */
export function dayOf(limits: BudgetLimits): number {
  return withMargin(limits.dayMs ?? DAY_MS);
}

/** Drops calls older than the day window (`dayMs`, 24 h unless time is scaled). */
export function prune(calls: number[], now: number, dayMs = DAY_MS): number[] {
  const from = now - dayMs;
  let i = 0;
  while (i < calls.length && (calls[i] as number) <= from) i += 1;
  return i === 0 ? calls : calls.slice(i);
}

export function countSince(calls: number[], since: number): number {
  let n = 0;
  for (let i = calls.length - 1; i >= 0 && (calls[i] as number) > since; i -= 1) n += 1;
  return n;
}
