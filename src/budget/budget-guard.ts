// A budget guard decides whether one more upstream call may be sent now. A call that would break the
// budget is never sent: the guard throws BudgetExhaustedError with the moment the budget returns.
import type { ShareTally } from './share-tally.js';

export interface BudgetLimits {
  /** 0 means no cap. */
  perMinute: number;
  /** Counted over a rolling 24 hours, 0 means no cap. */
  perDay: number;
  /** Minimum spacing between two calls; a caller waits for its slot rather than being refused. */
  minIntervalMs: number;
  /**
   * The part of each window (minute, day) kept for callers below their fair share (BUDGET_RESERVE, fair-share.ts);
   * 0 or absent: whoever asks first may spend the whole window.
   */
  reserve?: number;
  /** Length of the "minute" and "day" windows; only tests and benchmarks that scale time change them. */
  minuteMs?: number;
  dayMs?: number;
}

/** One window's fair share: its limit, the calls kept back, how many callers spent in it and how many were held to their share. */
export interface ShareWindow {
  limit: number;
  reserved: number;
  callers: number;
  held: number;
}

export interface BudgetSnapshot {
  limits: BudgetLimits;
  usedMinute: number;
  usedDay: number;
  leftMinute: number | null;
  leftDay: number | null;
  /** ISO time when a call could next be sent, or null when one can be sent now. */
  nextAvailableAt: string | null;
  backedOffUntil: string | null;
  /** Where the ledger lives: "memory", "embedded" or "redis" (or "local-fallback" when Redis is lost). */
  store: string;
  /** How the guard decides right now: "shared" (Redis), "local" (memory or embedded) or "local-fallback". */
  mode?: 'shared' | 'local' | 'local-fallback';
  /** Fair shares in force (BUDGET_RESERVE), per window that keeps calls back. */
  share?: { reserve: number; minute?: ShareWindow; day?: ShareWindow };
}

export interface BudgetGuard {
  readonly name: string;
  readonly limits: BudgetLimits;
  /** Calls sent and refusals for a spent share, by caller label, for metrics. */
  readonly tally: ShareTally;
  /**
   * Reserves one call for the callers the work runs for (src/core/caller.ts `currentCallers`), put to the account
   * of the first that may have it; resolves when it may be sent, after waiting at most `maxWaitMs` for pacing.
   * Throws BudgetExhaustedError when the budget is spent, CallerShareSpentError when only calls kept for callers
   * below their share are left.
   */
  acquire(): Promise<void>;
  /** The upstream refused for its own limits: send nothing until `retryAfterMs` has passed. */
  backOff(retryAfterMs: number): Promise<void>;
  snapshot(): Promise<BudgetSnapshot>;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** How long a caller may wait for a pacing slot before being refused instead. */
export const MAX_PACING_WAIT_MS = 3_000;
