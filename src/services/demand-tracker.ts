// How much each key is asked for, decaying with a half-life, so that the scarce upstream budget goes to
// what callers want now rather than to whoever asked first. Per process: with several replicas each
// ranks its own callers' demand, while the budget itself stays shared and safe (the guard's ledger).
//
// At its bound a new key evicts the coldest. A scan for it cost every new key all 10,000 counts: a flood of
// new quote symbols spent a quarter of the CPU there. The coldest is found in a binary heap (flatqueue)
// instead, in logarithmic time, on a score that orders keys as their decayed counts do at every moment
// (`score` says why) and changes only when a key is noted; a note leaves the heap alone, so a cache hit costs
// what it did.
import FlatQueue from 'flatqueue';

interface Count {
  readonly key: string;
  value: number;
  at: number;
}

const MAX_KEYS = 10_000;
/** Ranks are recomputed at most this often: a sort per request would cost more than it tells. */
const RANK_TTL_MS = 1_000;

export class DemandTracker {
  private readonly counts = new Map<string, Count>();
  /**
   * Every count once, queued at its score when it went in. A note only raises a score, so a queued score is
   * never above the count's own: the head, once requeued if it was noted since, is the coldest key.
   */
  private readonly coldest = new FlatQueue<Count>();
  private readonly epoch: number;
  private ranks = new Map<string, number>();
  private rankedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly halfLifeMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = MAX_KEYS,
  ) {
    this.epoch = now();
  }

  note(key: string): void {
    const now = this.now();
    const count = this.counts.get(key);
    if (count !== undefined) {
      // Updated in place: this runs on every cache hit, hot path included.
      count.value = this.decayed(count, now) + 1;
      count.at = now;
      return;
    }
    if (this.counts.size >= this.maxKeys) this.forgetColdest();
    const added = { key, value: 1, at: now };
    this.counts.set(key, added);
    this.coldest.push(added, this.score(added));
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

  /**
   * log2 of the count decayed back to the epoch: log2(value) - (now - at) / halfLife is log2 of its decayed
   * value now, and differs from this by now's term alone, the same for every key. So scores order keys as
   * their decayed values do at any moment, and a score moves only when its key is noted.
   */
  private score(count: Count): number {
    return Math.log2(count.value) + (count.at - this.epoch) / this.halfLifeMs;
  }

  /**
   * Drops the key with the least decayed count. A head noted since it was queued goes back in at its score now
   * (once for all its notes since), so a new key costs amortised O(log n): a heap pop and push, plus one
   * requeue per earlier note at most.
   */
  private forgetColdest(): void {
    for (let queued = this.coldest.peekValue(); queued !== undefined; queued = this.coldest.peekValue()) {
      const count = this.coldest.pop() as Count;
      const score = this.score(count);
      if (score === queued) {
        this.counts.delete(count.key);
        return;
      }
      this.coldest.push(count, score);
    }
  }
}
