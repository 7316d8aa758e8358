// The budget guard without Redis: the ledger lives in the embedded SQLite store, and every reservation
// is committed (fsynced) before the call is sent, so a restart or a kill -9 never resets the day's
// count. Each acquire decides inside one IMMEDIATE transaction over the stored calls, which also keeps
// several processes sharing one STATE_DIR inside one budget.
import { setTimeout as sleep } from 'node:timers/promises';
import type { StatementSync } from 'node:sqlite';
import { BudgetExhaustedError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import { immediateTransaction, type StateDatabase } from '../store/state-database.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS } from './budget-guard.js';
import { dayOf, decide, type LedgerState, type SlotDecision } from './budget-ledger.js';
import { snapshotOf } from './memory-budget-guard.js';

export class EmbeddedBudgetGuard implements BudgetGuard {
  private readonly selectCalls: StatementSync;
  private readonly selectBackoff: StatementSync;
  private readonly insertCall: StatementSync;
  private readonly pruneCalls: StatementSync;
  private readonly upsertBackoff: StatementSync;

  constructor(
    readonly name: string,
    readonly limits: BudgetLimits,
    private readonly db: StateDatabase,
    private readonly maxWaitMs = MAX_PACING_WAIT_MS,
    /** Tests freeze it: each reservation is an fsynced transaction, slow enough to move a real clock. */
    private readonly now: () => number = Date.now,
    /** Whose calls these are (see src/store/upstream-identity.ts); `name` is only for messages. */
    private readonly ledger: string = name,
  ) {
    this.selectCalls = db.prepare('SELECT at FROM budget_calls WHERE name = ? AND at > ? ORDER BY at ASC');
    this.selectBackoff = db.prepare('SELECT until FROM budget_backoff WHERE name = ?');
    this.insertCall = db.prepare('INSERT INTO budget_calls (name, at) VALUES (?, ?)');
    this.pruneCalls = db.prepare('DELETE FROM budget_calls WHERE name = ? AND at <= ?');
    this.upsertBackoff = db.prepare(
      'INSERT INTO budget_backoff (name, until) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET until = MAX(until, excluded.until)',
    );
  }

  private reserve(now: number): SlotDecision {
    return immediateTransaction(this.db, () => {
      this.pruneCalls.run(this.ledger, now - dayOf(this.limits));
      const decision = decide(this.read(now), this.limits, now, this.maxWaitMs);
      if (decision.ok) this.insertCall.run(this.ledger, decision.at);
      return decision;
    });
  }

  async acquire(): Promise<void> {
    const now = this.now();
    const decision = this.reserve(now);
    if (!decision.ok) {
      const seconds = (decision.retryAt - now) / 1000;
      throw new BudgetExhaustedError(`${publicName(this.name)} call budget is spent; it returns in ${Math.ceil(seconds)} s`, seconds);
    }
    if (decision.at > now) await sleep(decision.at - now);
  }

  async backOff(retryAfterMs: number): Promise<void> {
    this.upsertBackoff.run(this.ledger, this.now() + retryAfterMs);
  }

  async snapshot(): Promise<BudgetSnapshot> {
    const now = this.now();
    return snapshotOf(this.read(now), this.limits, now, 'embedded', 'local');
  }

  private read(now: number): LedgerState {
    const rows = this.selectCalls.all(this.ledger, now - dayOf(this.limits)) as unknown as { at: number }[];
    const backoff = this.selectBackoff.get(this.ledger) as { until: number | null } | undefined;
    return { calls: rows.map((row) => row.at), backedOffUntil: backoff?.until ?? 0 };
  }
}
