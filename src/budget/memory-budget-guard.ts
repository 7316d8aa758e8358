// A single-process budget guard. Persistence (embedded store) and sharing (Redis) wrap the same ledger.
import { setTimeout as sleep } from 'node:timers/promises';
import { BudgetExhaustedError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS } from './budget-guard.js';
import { countSince, dayOf, decide, type LedgerState, minuteOf, nextSlot, prune } from './budget-ledger.js';

export class MemoryBudgetGuard implements BudgetGuard {
  protected state: LedgerState = { calls: [], backedOffUntil: 0 };

  constructor(
    readonly name: string,
    readonly limits: BudgetLimits,
    protected readonly maxWaitMs = MAX_PACING_WAIT_MS,
  ) {}

  async acquire(): Promise<void> {
    const now = Date.now();
    this.state.calls = prune(this.state.calls, now, dayOf(this.limits));
    const decision = decide(this.state, this.limits, now, this.maxWaitMs);
    if (!decision.ok) {
      throw new BudgetExhaustedError(
        `${publicName(this.name)} call budget is spent; it returns in ${Math.ceil((decision.retryAt - now) / 1000)} s`,
        (decision.retryAt - now) / 1000,
      );
    }
    // Reserve the slot before waiting, so concurrent callers queue behind it.
    this.state.calls.push(decision.at);
    this.onReserve(decision.at);
    if (decision.at > now) await sleep(decision.at - now);
  }

  async backOff(retryAfterMs: number): Promise<void> {
    this.state.backedOffUntil = Math.max(this.state.backedOffUntil, Date.now() + retryAfterMs);
    this.onReserve(undefined);
  }

  async snapshot(): Promise<BudgetSnapshot> {
    return snapshotOf(this.state, this.limits, Date.now(), 'memory', 'local');
  }

  /** Hook for persistent subclasses. */
  protected onReserve(_at: number | undefined): void {}
}

export function snapshotOf(
  state: LedgerState,
  limits: BudgetLimits,
  now: number,
  store: string,
  mode?: BudgetSnapshot['mode'],
): BudgetSnapshot {
  const calls = prune(state.calls, now, dayOf(limits));
  const usedMinute = countSince(calls, now - minuteOf(limits));
  const usedDay = calls.length;
  const next = nextSlot({ calls, backedOffUntil: state.backedOffUntil }, limits, now);
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
  };
}
