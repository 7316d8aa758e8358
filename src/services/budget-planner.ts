// Where provider A's scarce calls go. First come, first served spends them on refreshing whatever was
// asked last; instead they follow demand (a decaying count per key):
//  - only the hottest keys, as many as the budget can keep fresh (calls per minute and per day times the
//    fresh window), are refreshed, and shortly before their fresh window ends so callers never see them
//    stale;
//  - a refresh waits while callers asking for a key with no value at all are being refused: serving
//    something beats serving the hot keys a little fresher;
//  - among keys with no value, a call goes to the one most asked for: a key is not loaded while a hotter
//    one, refused within the last minute, still waits for its first value; hotter for the asking caller too, so
//    that one caller's requests for a key it cannot have yet never hold another caller's first call back (each
//    spends its own share: fair-share.ts);
//  - with a fallback source, a key with no fresh value goes to provider A only when it is among the
//    hottest; the rest are answered by the fallback first;
//  - "hottest" is judged over every caller's demand, and also over each caller's own: one caller asking for
//    many keys many times (a flood, a stream of symbols that do not exist) cannot push every other caller's
//    keys out of the hot set, since each caller's own hottest keys stay hot for it (what each then spends is
//    its fair share of the budget: fair-share.ts).
// The budget guard still decides every single call (limits, spacing, replicas); this only chooses which
// keys ask it.
import type { BudgetLimits } from '../budget/budget-guard.js';
import { dayOf, minuteOf } from '../budget/budget-ledger.js';
import { LRUCache } from 'lru-cache';
import type { CacheEntry } from '../cache/cache-store.js';
import { currentCallers, SERVICE } from '../core/caller.js';
import { DemandTracker } from './demand-tracker.js';

/** Demand halves over ten minutes (scaled with the budget's minute): a burst fades within the hour. */
const HALF_LIFE_MINUTES = 10;
/** A fresh value is refreshed early in the last tenth of its fresh window. */
const EARLY_SHARE = 0.1;
/**
 * Keys remembered as refused while they had no value. mayLoad asks whether any is hotter than the key asking, so
 * each new key reads them all: bounded small, the most recent kept (a flood of new keys once made it 43 % of the CPU).
 */
const MAX_WAITING = 256;
/** Callers whose own demand is tracked, and keys per caller (the hot set is a few keys; this is room enough). */
const MAX_CALLERS = 1_024;
const KEYS_PER_CALLER = 64;

export class BudgetPlanner {
  readonly demand: DemandTracker;
  /** How many keys the budget can keep fresh. */
  readonly hot: number;
  readonly minuteMs: number;
  private refusedAt = Number.NEGATIVE_INFINITY;
  /** Keys refused while they had no value at all, and when. */
  private readonly waiting = new Map<string, number>();
  /** Each caller's own demand, by account. */
  private readonly byCaller = new LRUCache<string, DemandTracker>({ max: MAX_CALLERS });

  constructor(
    limits: BudgetLimits,
    private readonly freshMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.minuteMs = minuteOf(limits);
    this.demand = new DemandTracker(HALF_LIFE_MINUTES * this.minuteMs, now);
    const keepable = (calls: number, windowMs: number) =>
      calls > 0 ? (calls * Math.max(freshMs, 1)) / windowMs : Number.POSITIVE_INFINITY;
    this.hot = Math.max(1, Math.floor(Math.min(keepable(limits.perMinute, this.minuteMs), keepable(limits.perDay, dayOf(limits)))));
  }

  /**
   * A request for `key`: every caller's demand, and its callers' own (core/caller.ts). A hit the hot path answers
   * runs outside any request's context (SERVICE): counted in everyone's demand only, for nothing more on a hit.
   */
  note(key: string): void {
    this.demand.note(key);
    for (const caller of currentCallers()) {
      if (caller === SERVICE) continue;
      let own = this.byCaller.get(caller.account);
      if (own === undefined) {
        own = new DemandTracker(this.demand.halfLifeMs, this.now, KEYS_PER_CALLER);
        this.byCaller.set(caller.account, own);
      }
      own.note(key);
    }
  }

  /** Among the keys the budget keeps fresh: the hottest of all callers', or of the asking callers' own. */
  isHot(key: string): boolean {
    if (this.demand.rank(key) < this.hot) return true;
    return currentCallers().some((caller) => (this.byCaller.get(caller.account)?.rank(key) ?? Number.POSITIVE_INFINITY) < this.hot);
  }

  /** A caller found no value for `key` and the budget refused to fetch one. */
  noteRefusal(key: string): void {
    this.refusedAt = this.now();
    this.waiting.delete(key);
    if (this.waiting.size >= MAX_WAITING) this.waiting.delete(this.waiting.keys().next().value as string);
    this.waiting.set(key, this.refusedAt);
  }

  /** `key` has a value now. */
  noteLoaded(key: string): void {
    this.waiting.delete(key);
  }

  /**
   * May a key with no value spend a call now, or does a hotter one, refused lately, come first? Hotter over every
   * caller's demand and, when the asking callers are known, over one of theirs: a key hot only through a flood of
   * another caller's requests does not make them wait. Work for nobody (SERVICE) is judged by every caller's demand.
   */
  mayLoad(key: string): boolean {
    const now = this.now();
    const demand = this.demand.value(key);
    const asking = currentCallers().filter((caller) => caller !== SERVICE);
    const hotterForAsking = (other: string) =>
      asking.length === 0 ||
      asking.some((caller) => {
        const own = this.byCaller.get(caller.account);
        return own !== undefined && own.value(other) > own.value(key);
      });
    for (const [other, at] of this.waiting) {
      if (now - at > this.minuteMs) this.waiting.delete(other);
      else if (other !== key && this.demand.value(other) > demand && hotterForAsking(other)) return false;
    }
    return true;
  }

  /** Refresh `key` (stale, or fresh and in its last tenth) in the background? */
  mayRefresh(key: string, entry: CacheEntry): boolean {
    const now = this.now();
    if (now < entry.freshUntil - EARLY_SHARE * this.freshMs) return false;
    return this.isHot(key) && now - this.refusedAt > this.minuteMs;
  }
}
