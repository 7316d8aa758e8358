// How much each key is asked for, decaying with a half-life, so that the scarce upstream budget goes to
// what callers want now rather than to whoever asked first. Per process: with several replicas each
// ranks its own callers' demand, while the budget itself stays shared and safe (the guard's ledger).

interface Count {
  value: number;
  at: number;
}

const MAX_KEYS = 10_000;
/** Ranks are recomputed at most this often: a sort per request would cost more than it tells. */
const RANK_TTL_MS = 1_000;

export class DemandTracker {
  private readonly counts = new Map<string, Count>();
  private ranks = new Map<string, number>();
  private rankedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly halfLifeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  note(key: string): void {
    const now = this.now();
    const count = this.counts.get(key);
    if (count !== undefined) {
      // Updated in place: this runs on every cache hit, hot path included.
      count.value = this.decayed(count, now) + 1;
      count.at = now;
      return;
    }
    if (this.counts.size >= MAX_KEYS) this.forgetColdest(now);
    this.counts.set(key, { value: 1, at: now });
  }

  /** Decayed requests for `key`. */
  value(key: string): number {
    return this.decayed(this.counts.get(key), this.now());
  }

  /** How many keys are asked for more than `key` (0 for the hottest); a key never asked ranks last. */
  rank(key: string): number {
    const now = this.now();
    if (now - this.rankedAt >= RANK_TTL_MS) {
      const sorted = [...this.counts].map(([k, c]) => [k, this.decayed(c, now)] as const).sort((a, b) => b[1] - a[1]);
      this.ranks = new Map(sorted.map(([k], i) => [k, i]));
      this.rankedAt = now;
    }
    return this.ranks.get(key) ?? this.counts.size;
  }

  private decayed(count: Count | undefined, now: number): number {
    return count === undefined ? 0 : count.value * 2 ** (-(now - count.at) / this.halfLifeMs);
  }

  private forgetColdest(now: number): void {
    let coldest: string | undefined;
    let least = Number.POSITIVE_INFINITY;
    for (const [key, count] of this.counts) {
      const value = this.decayed(count, now);
      if (value < least) [coldest, least] = [key, value];
    }
    if (coldest !== undefined) this.counts.delete(coldest);
  }
}
