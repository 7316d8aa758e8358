// Who may take the next slot of a budget. The budget's own arithmetic (budget-ledger.ts) says when one more
// call fits the provider's limits; this says whether the caller asking may have it.
//
// In every counted window (minute, day) with a limit L, R = floor(L × BUDGET_RESERVE) calls are kept back:
// the first L − R calls of a window go to whoever asks, the last R only to a caller that has spent less than
// its fair share of the window, (L − R) × its weight / the weights of every caller that spent in it (itself
// included). So one caller alone may still spend L − R (at least three quarters by default: work-conserving),
// never the last R; a newcomer, having spent nothing, always finds them while another caller floods. Spacing
// (one call a second) is no window and keeps nothing back.
//
// A stream topic's poll asks for every caller that holds the topic: the first that may have a slot (the
// earliest one) is charged. The Redis guard's script (redis-budget-guard.ts) decides the same way inside
// Redis, atomically for every replica; a test holds the two to each other.
import type { Caller } from '../core/caller.js';
import type { BudgetLimits } from './budget-guard.js';
import { countSince, dayOf, type LedgerCall, type LedgerState, minuteOf, nextSlot } from './budget-ledger.js';

export type Claimant = Pick<Caller, 'account' | 'weight'>;

/** Which limit held the caller back: the budget itself, or its share of the minute or the day. */
export type Hold = 'budget' | 'minute' | 'day';

export type SlotDecision = { ok: true; at: number; claimant: number } | { ok: false; retryAt: number; hold: Hold };

/** The calls of a window of `limit` kept back for callers below their share. */
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
  const full = nextSlot(state, limits, now);
  if (full - now > maxWaitMs) return { ok: false, retryAt: full, hold: 'budget' };
  const windows = fairWindows(limits);
  if (windows.length === 0) return { ok: true, at: full, claimant: 0 };
  let best: SlotDecision | undefined;
  for (const [index, claimant] of claimants.entries()) {
    const decision = decideFor(state, limits, now, maxWaitMs, windows, full, claimant, index);
    if (best === undefined) best = decision;
    else if (decision.ok && (!best.ok || decision.at < best.at)) best = decision;
    else if (!decision.ok && !best.ok && decision.retryAt < best.retryAt) best = decision;
    // No one can have an earlier slot than the budget's own next one.
    if (best.ok && best.at === full) break;
  }
  return best ?? { ok: true, at: full, claimant: 0 };
}

function decideFor(
  state: LedgerState,
  limits: BudgetLimits,
  now: number,
  maxWaitMs: number,
  windows: readonly FairWindow[],
  full: number,
  claimant: Claimant,
  index: number,
): SlotDecision {
  let { perMinute, perDay } = limits;
  let hold: Hold | undefined;
  for (const window of windows) {
    const open = window.limit - window.reserved;
    // The slot is one of the first L − R of its window, or the claimant is below its share: it may have it.
    if (countSince(state.calls, full - window.ms) < open || belowShare(state.calls, claimant, open, window.ms, now)) continue;
    if (window.name === 'minute') perMinute = open;
    else perDay = open;
    hold ??= window.name;
  }
  if (hold === undefined) return { ok: true, at: full, claimant: index };
  const at = nextSlot(state, { ...limits, perMinute, perDay }, now);
  return at - now <= maxWaitMs ? { ok: true, at, claimant: index } : { ok: false, retryAt: at, hold };
}

/** Whether `claimant` has spent less than its share of the `open` calls of the window ending now. */
export function belowShare(calls: readonly LedgerCall[], claimant: Claimant, open: number, windowMs: number, now: number): boolean {
  const from = now - windowMs;
  let spent = 0;
  let weights = claimant.weight;
  const others = new Set<string>();
  for (let i = calls.length - 1; i >= 0 && (calls[i] as LedgerCall).at > from; i -= 1) {
    const call = calls[i] as LedgerCall;
    if (call.account === claimant.account) spent += 1;
    else if (!others.has(call.account)) {
      others.add(call.account);
      weights += call.weight;
    }
  }
  return spent * weights < open * claimant.weight;
}

/** How many callers spent in the window ending now. */
export function callersIn(calls: readonly LedgerCall[], windowMs: number, now: number): number {
  const from = now - windowMs;
  const accounts = new Set<string>();
  for (let i = calls.length - 1; i >= 0 && (calls[i] as LedgerCall).at > from; i -= 1) accounts.add((calls[i] as LedgerCall).account);
  return accounts.size;
}
