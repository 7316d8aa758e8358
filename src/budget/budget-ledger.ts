// The pure arithmetic of a budget: given the times of past calls, when may the next one go?
import { type BudgetLimits, DAY_MS, MINUTE_MS } from './budget-guard.js';

/** One call sent (or reserved), and whose account it was put to. */
export interface LedgerCall {
  at: number;
  /** The caller's account (src/core/caller.ts); '' where it is not known (a phantom call, an older ledger). */
  account: string;
  /** The caller's weight in a fair share. */
  weight: number;
}

export interface LedgerState {
  /** Sent (or reserved) calls within the last 24 hours, ascending by time. */
  calls: LedgerCall[];
  backedOffUntil: number;
}

/** Earliest time at or after `now` when one more call fits every limit. */
export function nextSlot(state: LedgerState, limits: BudgetLimits, now: number): number {
  let at = Math.max(now, state.backedOffUntil);
  const last = state.calls[state.calls.length - 1];
  if (limits.minIntervalMs > 0 && last !== undefined) at = Math.max(at, last.at + limits.minIntervalMs);
  // Once `at` is past the n-th most recent call's window, the window holds fewer than n calls.
  if (limits.perMinute > 0) at = Math.max(at, windowReopens(state.calls, limits.perMinute, minuteOf(limits)));
  if (limits.perDay > 0) at = Math.max(at, windowReopens(state.calls, limits.perDay, dayOf(limits)));
  return at;
}

function windowReopens(calls: readonly LedgerCall[], limit: number, windowMs: number): number {
  if (calls.length < limit) return 0;
  return (calls[calls.length - limit] as LedgerCall).at + windowMs;
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
export function prune(calls: LedgerCall[], now: number, dayMs = DAY_MS): LedgerCall[] {
  const from = now - dayMs;
  let i = 0;
  while (i < calls.length && (calls[i] as LedgerCall).at <= from) i += 1;
  return i === 0 ? calls : calls.slice(i);
}

export function countSince(calls: readonly LedgerCall[], since: number): number {
  let n = 0;
  for (let i = calls.length - 1; i >= 0 && (calls[i] as LedgerCall).at > since; i -= 1) n += 1;
  return n;
}
