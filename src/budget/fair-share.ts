// Who may take the next slot of a budget. The budget's own arithmetic (budget-ledger.ts) says when one more
// call fits the provider's limits; this says whether the caller asking may have it.
//
// In every counted window (minute, day) with a limit L, R = floor(L × BUDGET_RESERVE) calls are kept back, and
// the other L − R are shared among the callers spending in the window by max-min fairness: each caller's share
// is what is left once every caller that spent less than an equal part (by weight) has its own spend, divided
// among the rest by weight. A caller may have a call while it has spent less than its share. So:
//  - one caller alone may spend L − R (at least three quarters by default: work-conserving), never the last R;
//  - a newcomer, having spent nothing, is below any share: it finds the calls kept back while another floods;
//  - under contention no caller spends more than its share, and a share nobody else uses is its (a caller that
//    spent one call leaves the others all but that one).
// Spacing (one call a second) is no window and keeps nothing back.
//
// A stream topic's poll asks for every caller that holds the topic: the first that may have the call is charged.
// The Redis guard's script (redis-budget-guard.ts) decides the same way inside Redis, atomically for every
// replica; a property test holds the two to each other.
import type { Caller } from '../core/caller.js';
import type { BudgetLimits } from './budget-guard.js';
import { dayOf, type LedgerCall, type LedgerState, minuteOf, nextSlot } from './budget-ledger.js';

export type Claimant = Pick<Caller, 'account' | 'weight'>;

/** Which limit held the caller back: the budget itself, or its share of the minute or the day. */
export type Hold = 'budget' | 'minute' | 'day';

export type SlotDecision = { ok: true; at: number; claimant: number } | { ok: false; retryAt: number; hold: Hold };

/** The calls of a window of `limit` kept back for callers below their share. @internal */
export function reservedCalls(limit: number, reserve: number): number {
  // The epsilon keeps 0.25 × 4 at 1 whatever the floating point makes of it.
  return limit > 0 && reserve > 0 ? Math.floor(limit * reserve + 1e-9) : 0;
}

interface FairWindow {
  name: 'minute' | 'day';
  limit: number;
  ms: number;
  reserved: number;
}

/** The windows of `limits` that keep calls back. */
export function fairWindows(limits: BudgetLimits): FairWindow[] {
  const reserve = limits.reserve ?? 0;
  const windows: FairWindow[] = [];
  const minute = reservedCalls(limits.perMinute, reserve);
  if (minute > 0) windows.push({ name: 'minute', limit: limits.perMinute, ms: minuteOf(limits), reserved: minute });
  const day = reservedCalls(limits.perDay, reserve);
  if (day > 0) windows.push({ name: 'day', limit: limits.perDay, ms: dayOf(limits), reserved: day });
  return windows;
}

/**
 * The earliest slot within `maxWaitMs` that one of `claimants` may take, and which of them it is put to; else
 * when to try again, and what held them back.
 */
export function decide(
  state: LedgerState,
  limits: BudgetLimits,
  now: number,
  maxWaitMs: number,
  claimants: readonly Claimant[],
): SlotDecision {
  const at = nextSlot(state, limits, now);
  if (at - now > maxWaitMs) return { ok: false, retryAt: at, hold: 'budget' };
  const windows = fairWindows(limits);
  let refusal: { retryAt: number; hold: Hold } | undefined;
  for (const [index, claimant] of claimants.entries()) {
    let held: { retryAt: number; hold: Hold } | undefined;
    for (const window of windows) {
      const { spent, share, calls } = shareIn(state.calls, claimant, window.limit - window.reserved, window.ms, now);
      if (spent < share) continue;
      // It may ask again once enough of its own calls (newest first) have left the window to put it below its share
      // as it is now; the share grows meanwhile as others' calls leave, so this is when it will have one at the latest.
      const leaving = calls[Math.ceil(share) - 1] ?? now;
      const retryAt = Math.max(at, leaving + window.ms);
      if (held === undefined || retryAt > held.retryAt) held = { retryAt, hold: window.name };
    }
    if (held === undefined) return { ok: true, at, claimant: index };
    if (refusal === undefined || held.retryAt < refusal.retryAt) refusal = held;
  }
  return refusal === undefined ? { ok: true, at, claimant: 0 } : { ok: false, ...refusal };
}

interface Share {
  /** Calls the claimant spent in the window. */
  spent: number;
  /** Its max-min fair share of the window's `open` calls, given what every other caller spent in it. */
  share: number;
  /** The times of its own calls in the window, newest first. */
  calls: number[];
}

/** `claimant`'s spend and share of the `open` calls of the window of `windowMs` ending now. @internal */
export function shareIn(calls: readonly LedgerCall[], claimant: Claimant, open: number, windowMs: number, now: number): Share {
  const from = now - windowMs;
  const own: number[] = [];
  const others = new Map<string, { spent: number; weight: number }>();
  for (let i = calls.length - 1; i >= 0 && (calls[i] as LedgerCall).at > from; i -= 1) {
    const call = calls[i] as LedgerCall;
    if (call.account === claimant.account) own.push(call.at);
    else {
      const other = others.get(call.account);
      if (other === undefined) others.set(call.account, { spent: 1, weight: call.weight });
      else other.spent += 1;
    }
  }
  // Water-filling: those that spent less than the level the rest would get keep their spend; the rest share what is left.
  let left = open;
  let weights = claimant.weight;
  for (const other of others.values()) weights += other.weight;
  for (const other of [...others.values()].sort((a, b) => a.spent / a.weight - b.spent / b.weight)) {
    if (other.spent / other.weight > left / weights) break;
    left -= other.spent;
    weights -= other.weight;
  }
  return { spent: own.length, share: (left / weights) * claimant.weight, calls: own };
}

/** How many callers spent in the window ending now. */
export function callersIn(calls: readonly LedgerCall[], windowMs: number, now: number): number {
  const from = now - windowMs;
  const accounts = new Set<string>();
  for (let i = calls.length - 1; i >= 0 && (calls[i] as LedgerCall).at > from; i -= 1) accounts.add((calls[i] as LedgerCall).account);
  return accounts.size;
}
