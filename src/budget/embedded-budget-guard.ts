// The budget guard without Redis: the ledger lives in the embedded SQLite store, and every reservation
// is committed (fsynced) before the call is sent, so a restart or a kill -9 never resets the day's
// count. Each acquire decides inside one IMMEDIATE transaction over the stored calls, which also keeps
// several processes sharing one STATE_DIR inside one budget.
import { setTimeout as sleep } from 'node:timers/promises';
import type { StatementSync } from 'node:sqlite';
import { type Caller, currentCallers } from '../core/caller.js';
import { immediateTransaction, type StateDatabase } from '../store/state-database.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS } from './budget-guard.js';
import { dayOf, type LedgerCall, type LedgerState } from './budget-ledger.js';
import { refusalOf } from './budget-refusal.js';
import { decide, type SlotDecision } from './fair-share.js';
import { snapshotOf } from './memory-budget-guard.js';
import { ShareTally } from './share-tally.js';

export class EmbeddedBudgetGuard implements BudgetGuard {
  readonly tally = new ShareTally();
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
    this.selectCalls = db.prepare('SELECT at, account, weight FROM budget_calls WHERE name = ? AND at > ? ORDER BY at ASC');
    this.selectBackoff = db.prepare('SELECT until FROM budget_backoff WHERE name = ?');
    this.insertCall = db.prepare('INSERT INTO budget_calls (name, at, account, weight) VALUES (?, ?, ?, ?)');
    this.pruneCalls = db.prepare('DELETE FROM budget_calls WHERE name = ? AND at <= ?');
    this.upsertBackoff = db.prepare(
      'INSERT INTO budget_backoff (name, until) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET until = MAX(until, excluded.until)',
    );
  }

  private reserve(now: number, claimants: readonly Caller[]): SlotDecision {
    return immediateTransaction(this.db, () => {
      this.pruneCalls.run(this.ledger, now - dayOf(this.limits));
      const decision = decide(this.read(now), this.limits, now, this.maxWaitMs, claimants);
      const charged = decision.ok ? claimants[decision.claimant] : undefined;
      if (charged !== undefined) this.insertCall.run(this.ledger, (decision as { at: number }).at, charged.account, charged.weight);
      return decision;
    });
  }

  async acquire(): Promise<void> {
    const now = this.now();
    const claimants = currentCallers();
    const decision = this.reserve(now, claimants);
    if (!decision.ok) {
      if (decision.hold !== 'budget') this.tally.refused(claimants, now);
      throw refusalOf(this.name, this.limits, decision.hold, decision.retryAt - now, claimants);
    }
    this.tally.sent(claimants[decision.claimant] as Caller);
    if (decision.at > now) await sleep(decision.at - now);
  }

  async backOff(retryAfterMs: number): Promise<void> {
    this.upsertBackoff.run(this.ledger, this.now() + retryAfterMs);
  }

  async snapshot(): Promise<BudgetSnapshot> {
    const now = this.now();
    return snapshotOf(this.read(now), this.limits, now, 'embedded', 'local', (ms) => this.tally.heldSince(now - ms));
  }

  private read(now: number): LedgerState {
    const calls = this.selectCalls.all(this.ledger, now - dayOf(this.limits)) as unknown as LedgerCall[];
    const backoff = this.selectBackoff.get(this.ledger) as { until: number | null } | undefined;
    return { calls, backedOffUntil: backoff?.until ?? 0 };
  }
}
