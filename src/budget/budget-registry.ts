// Budget guards by upstream name, created by whichever store backs them (memory, embedded, Redis).
import type { BudgetGuard, BudgetLimits } from './budget-guard.js';
import { MemoryBudgetGuard } from './memory-budget-guard.js';

export type BudgetFactory = (name: string, limits: BudgetLimits) => BudgetGuard;

export class BudgetRegistry {
  private readonly guards = new Map<string, BudgetGuard>();

  constructor(private readonly factory: BudgetFactory = (name, limits) => new MemoryBudgetGuard(name, limits)) {}

  get(name: string, limits: BudgetLimits): BudgetGuard {
    let guard = this.guards.get(name);
    if (guard === undefined) {
      guard = this.factory(name, limits);
      this.guards.set(name, guard);
    }
    return guard;
  }

  all(): ReadonlyMap<string, BudgetGuard> {
    return this.guards;
  }
}
