// How fresh a price is, said the one way for every source: what the value is (a live trade, a delayed one,
// the day's close, the last value before the close shown after it, the previous close in place of a trade,
// a halted market's, or unknown), the market time it stands for, the delay where the source states one, and
// the market's state where the source says it. The readings live beside each source's parser
// (upstreams/*); this module holds the shape, the header Alpha Vantage-shaped bodies carry it in, and the
// few helpers every reading shares. Nothing here claims `realtime`: only a source's own statement does.
// docs/reference/freshness.md tells what each source sends and how it is read.

export const FRESHNESS_KINDS = ['realtime', 'delayed', 'end-of-day', 'frozen', 'prior-close', 'halted', 'unknown'] as const;
type FreshnessKind = (typeof FRESHNESS_KINDS)[number];

export const MARKET_STATES = ['pre', 'regular', 'post', 'closed'] as const;
export type MarketState = (typeof MARKET_STATES)[number];

/** The market-data feed a value came through: IBKR's 6509 (R or Z real-time, D or Y delayed), Tastytrade's token level. */
export const FEEDS = ['realtime', 'delayed'] as const;
export type Feed = (typeof FEEDS)[number];

export interface Freshness {
  kind: FreshnessKind;
  /** Minutes behind the market, only where the source states the number. */
  delayMinutes?: number;
  /**
   * The market time the value stands for, ISO 8601: a date-time where the source gives one (or the moment
   * the value was received when it gives none), a date (`YYYY-MM-DD`, the exchange's trading day) where
   * the source gives only the day.
   */
  asOf: string;
  /** The market's state when the source answered, where the source says it. */
  market?: MarketState;
  /**
   * The feed, where the source states it and `kind` does not already say it: a prior close or a frozen
   * value that came through a delayed feed reads `{ kind: 'prior-close', feed: 'delayed' }`.
   */
  feed?: Feed;
}

/** The response header of Alpha Vantage-shaped answers, whose bodies must stay byte for byte the provider's. */
export const FRESHNESS_HEADER = 'x-data-freshness';

/** `<kind>[; minutes=N][; as-of=<ISO>]`, as the contract writes it (DESIGN.md, fifth wave). */
export function freshnessHeader(freshness: Freshness): string {
  const minutes = freshness.delayMinutes === undefined ? '' : `; minutes=${freshness.delayMinutes}`;
  return `${freshness.kind}${minutes}; as-of=${freshness.asOf}`;
}

/** An instant as the `asOf` of a value stamped at that time. */
export function instant(ms: number): string {
  return new Date(ms).toISOString();
}
