// Which broker symbols this replica needs streamed, and until when: a stream topic needs its symbols while
// it has viewers; a REST request needs its symbols for a while after it (60 s by default), so that a page
// polling the REST route is answered from the stream too.

export class QuoteDemand {
  private readonly held = new Map<object, readonly string[]>();
  private readonly counts = new Map<string, number>();
  private readonly touched = new Map<string, number>();

  constructor(private readonly retentionMs: number) {}

  /** `holder` (a stream topic) needs `symbols` until released; true when a symbol was not needed before. */
  hold(holder: object, symbols: readonly string[], now: number): boolean {
    const added = symbols.filter((s) => !this.needs(s, now));
    this.held.set(holder, symbols);
    for (const symbol of symbols) this.counts.set(symbol, (this.counts.get(symbol) ?? 0) + 1);
    return added.length > 0;
  }

  release(holder: object): void {
    const symbols = this.held.get(holder);
    if (symbols === undefined) return;
    this.held.delete(holder);
    for (const symbol of symbols) {
      const count = (this.counts.get(symbol) ?? 1) - 1;
      if (count > 0) this.counts.set(symbol, count);
      else this.counts.delete(symbol);
    }
  }

  /** A REST request asked for `symbols` now; true when a symbol was not needed before. */
  touch(symbols: readonly string[], now: number): boolean {
    const added = symbols.filter((s) => !this.needs(s, now));
    for (const symbol of symbols) this.touched.set(symbol, now + this.retentionMs);
    return added.length > 0;
  }

  needs(symbol: string, now: number): boolean {
    return this.counts.has(symbol) || (this.touched.get(symbol) ?? 0) > now;
  }

  /**
   * Every symbol needed now, with the time it is needed until: a held one `heldFor` from now (its holder
   * renews it), a touched one its REST retention. Expired touches are forgotten.
   */
  wanted(now: number, heldFor: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const [symbol, until] of this.touched) {
      if (until > now) out.set(symbol, until);
      else this.touched.delete(symbol);
    }
    for (const symbol of this.counts.keys()) out.set(symbol, Math.max(out.get(symbol) ?? 0, now + heldFor));
    return out;
  }
}
