// The error a refused reservation is: the budget spent (for everyone), or the caller's share of it. A share
// refusal is also noted on the running work (core/caller.ts): a stream topic served stale meanwhile then waits for
// the share to return rather than ask again every few seconds.
import { noteHeld } from '../core/caller.js';
import { type ApiError, BudgetExhaustedError, CallerShareSpentError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import type { BudgetLimits } from './budget-guard.js';
import { type Claimant, fairWindows, type Hold } from './fair-share.js';

export function refusalOf(name: string, limits: BudgetLimits, hold: Hold, delayMs: number, claimants: readonly Claimant[]): ApiError {
  const seconds = Math.max(0, delayMs) / 1000;
  const wait = Math.max(1, Math.ceil(seconds));
  const window = hold === 'budget' ? undefined : fairWindows(limits).find((w) => w.name === hold);
  if (window === undefined) return new BudgetExhaustedError(`${publicName(name)} call budget is spent; it returns in ${wait} s`, seconds);
  noteHeld(Date.now() + delayMs);
  return new CallerShareSpentError(
    `this caller has spent its fair share of ${publicName(name)}'s ${window.limit} calls a ${window.name}: the rest go to callers ` +
      `that have spent less (${window.reserved} are always kept for them: BUDGET_RESERVE). Cached answers are still served; a new ` +
      `call for this caller is possible in ${wait} s`,
    seconds,
    claimants.map((claimant) => claimant.account),
  );
}
