// A budget guard decides whether one more upstream call may be sent now. A call that would break the
// budget is never sent: the guard throws BudgetExhaustedError with the moment the budget returns.

export interface BudgetLimits {
  /** 0 means no cap. */
  perMinute: number;
  /** Counted over a rolling 24 hours, 0 means no cap. */
  perDay: number;
  /** Minimum spacing between two calls; a caller waits for its slot rather than being refused. */
  minIntervalMs: number;
  /** Length of the "minute" and "day" windows; only tests and benchmarks that scale time change them. */
  minuteMs?: number;
  dayMs?: number;
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
}

export interface BudgetGuard {
  readonly name: string;
  readonly limits: BudgetLimits;
  /** Reserves one call; resolves when it may be sent, after waiting at most `maxWaitMs` for pacing. */
  acquire(): Promise<void>;
  /** The upstream refused for its own limits: send nothing until `retryAfterMs` has passed. */
  backOff(retryAfterMs: number): Promise<void>;
  snapshot(): Promise<BudgetSnapshot>;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** How long a caller may wait for a pacing slot before being refused instead. */
export const MAX_PACING_WAIT_MS = 3_000;
