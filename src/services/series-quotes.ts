// Yahoo quotes for the quote fallback, read from the stored daily series (bar-store.ts) rather than from a
// chart of their own: the series' newest chart meta gives the price, its time, the day's range and volume,
// its bars the day's open and the previous session's close (parse-chart-quote.ts, seriesQuote). A quote is
// as old as the series' last refresh (its Age counts from there) and fresh for the QUOTE window; refreshing
// it refreshes the series every daily indicator of the symbol reads. How fresh it is comes from the same
// chart meta (seriesQuoteFreshness), kept beside each quote derived.
import type { CacheEntry, CacheWindow } from '../cache/cache-store.js';
import type { Freshness } from '../core/freshness.js';
import type { GlobalQuoteBody } from '../wire/alpha-vantage/bodies.js';
import { seriesQuote, seriesQuoteFreshness } from '../upstreams/yahoo/parse-chart-quote.js';
import { yahooSymbol } from '../upstreams/yahoo/yahoo-symbols.js';
import type { ChartSeries } from '../upstreams/yahoo/chart-series.js';
import type { BarStore, SeriesRef } from './bar-store.js';

export interface SeriesQuotesOptions {
  bars: BarStore;
  window: CacheWindow;
}

const MAX_REMEMBERED = 10_000;

export class SeriesQuotes {
  /** The quote last derived per symbol, so one series refresh renders (and ETags) one body. */
  private readonly derived = new Map<string, { series: CacheEntry<ChartSeries>; quote: CacheEntry<GlobalQuoteBody> }>();
  private readonly freshness = new WeakMap<CacheEntry<GlobalQuoteBody>, Freshness>();

  constructor(private readonly options: SeriesQuotesOptions) {}

  /** Whether `symbol` (the caller's) has a sure Yahoo equivalent. */
  covers(symbol: string): boolean {
    return yahooSymbol(symbol) !== undefined;
  }

  /** The quote from the stored series, however old; undefined when none is stored or it holds no quote. */
  async peek(symbol: string): Promise<CacheEntry<GlobalQuoteBody> | undefined> {
    const ref = this.ref(symbol);
    const series = await this.options.bars.peek(ref, this.options.window.freshMs);
    if (series === undefined) return undefined;
    try {
      return this.quote(symbol, ref, series);
    } catch {
      return undefined;
    }
  }

  /** Refreshes the series now and reads the quote from it (an unreadable quote is the refresh's failure). */
  async load(symbol: string): Promise<CacheEntry<GlobalQuoteBody>> {
    const ref = this.ref(symbol);
    return this.quote(symbol, ref, await this.options.bars.load(ref));
  }

  /** How fresh a quote this derived is (undefined for an entry it did not derive). */
  freshnessOf(quote: CacheEntry<GlobalQuoteBody>): Freshness | undefined {
    return this.freshness.get(quote);
  }

  private ref(symbol: string): SeriesRef {
    const mapped = yahooSymbol(symbol);
    if (mapped === undefined) throw new Error(`no Yahoo symbol for ${symbol}`);
    return { symbol: mapped, size: '1d' };
  }

  private quote(symbol: string, ref: SeriesRef, series: CacheEntry<ChartSeries>): CacheEntry<GlobalQuoteBody> {
    const known = this.derived.get(symbol);
    if (known !== undefined && known.series.storedAt === series.storedAt) return known.quote;
    const { freshMs, staleMs } = this.options.window;
    const quote = {
      value: seriesQuote(series.value, ref.symbol, symbol),
      storedAt: series.storedAt,
      freshUntil: series.storedAt + freshMs,
      staleUntil: series.storedAt + freshMs + staleMs,
    };
    this.freshness.set(quote, seriesQuoteFreshness(series.value, series.storedAt));
    if (this.derived.size >= MAX_REMEMBERED) this.derived.clear();
    this.derived.set(symbol, { series, quote });
    return quote;
  }
}
