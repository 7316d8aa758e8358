// A single-process budget guard. Persistence (embedded store) and sharing (Redis) wrap the same ledger.
import { setTimeout as sleep } from 'node:timers/promises';
import { currentCallers } from '../core/caller.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS, type ShareWindow } from './budget-guard.js';
import { countSince, dayOf, type LedgerState, minuteOf, nextSlot, prune } from './budget-ledger.js';
import { refusalOf } from './budget-refusal.js';
import { callersIn, decide, fairWindows } from './fair-share.js';
import { ShareTally } from './share-tally.js';

export class MemoryBudgetGuard implements BudgetGuard {
  protected state: LedgerState = { calls: [], backedOffUntil: 0 };
  readonly tally = new ShareTally();

  constructor(
    readonly name: string,
    readonly limits: BudgetLimits,
    protected readonly maxWaitMs = MAX_PACING_WAIT_MS,
  ) {}

  async acquire(): Promise<void> {
    const now = Date.now();
    const claimants = currentCallers();
    this.state.calls = prune(this.state.calls, now, dayOf(this.limits));
    const decision = decide(this.state, this.limits, now, this.maxWaitMs, claimants);
    if (!decision.ok) {
      if (decision.hold !== 'budget') this.tally.refused(claimants, now);
      throw refusalOf(this.name, this.limits, decision.hold, decision.retryAt - now, claimants);
    }
    // Reserve the slot before waiting, so concurrent callers queue behind it.
    const charged = claimants[decision.claimant] ?? (claimants[0] as (typeof claimants)[number]);
    this.state.calls.push({ at: decision.at, account: charged.account, weight: charged.weight });
    this.tally.sent(charged);
    if (decision.at > now) await sleep(decision.at - now);
  }

  async backOff(retryAfterMs: number): Promise<void> {
    this.state.backedOffUntil = Math.max(this.state.backedOffUntil, Date.now() + retryAfterMs);
  }

  async snapshot(): Promise<BudgetSnapshot> {
    const now = Date.now();
    return snapshotOf(this.state, this.limits, now, 'memory', 'local', (ms) => this.tally.heldSince(now - ms));
  }
}

/** `held`: how many accounts were held to their share in the window of that length ending now (the tally, or the shared record). */
export function snapshotOf(
  state: LedgerState,
  limits: BudgetLimits,
  now: number,
  store: string,
  mode: BudgetSnapshot['mode'] | undefined,
  held: (windowMs: number) => number,
): BudgetSnapshot {
  const calls = prune(state.calls, now, dayOf(limits));
  const usedMinute = countSince(calls, now - minuteOf(limits));
  const usedDay = calls.length;
  const next = nextSlot({ calls, backedOffUntil: state.backedOffUntil }, limits, now);
  const windows = fairWindows(limits);
  const share: NonNullable<BudgetSnapshot['share']> = { reserve: limits.reserve ?? 0 };
  for (const window of windows) {
    const figures: ShareWindow = {
      limit: window.limit,
      reserved: window.reserved,
      callers: callersIn(calls, window.ms, now),
      held: held(window.ms),
    };
    share[window.name] = figures;
  }
  return {
    limits,
    usedMinute,
    usedDay,
    leftMinute: limits.perMinute > 0 ? Math.max(0, limits.perMinute - usedMinute) : null,
    leftDay: limits.perDay > 0 ? Math.max(0, limits.perDay - usedDay) : null,
    nextAvailableAt: next > now ? new Date(next).toISOString() : null,
    backedOffUntil: state.backedOffUntil > now ? new Date(state.backedOffUntil).toISOString() : null,
    store,
    ...(mode === undefined ? {} : { mode }),
    ...(windows.length === 0 ? {} : { share }),
  };
}
