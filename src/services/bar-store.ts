// One stored bar series per symbol and bar size (src/upstreams/yahoo/chart-spans.ts), which the Yahoo
// quote fallback and every computed indicator of that symbol read: a dashboard's quote and five daily
// indicators cost one Yahoo call, not six copies of the same history.
//
// The series lives in the upstream cache under Yahoo's scope (`<scope>:bars:<size>:<symbol>`): in process
// and in the second tier (SQLite, or Redis shared by every replica), refreshed with single flight across
// replicas. The first fetch is the long range; every later refresh asks for the recent range (the current
// session) and merges it in (chart-series.ts), fetching the long range again only when the two do not
// join (a day without a refresh, a split that rewrote history). Readers bring their own windows: the quote
// wants the series refreshed within its 60 s, a daily indicator within TECHNICAL_DAILY; the series entry's
// own fresh window is the shortest of them, so a replica waiting on another's refresh takes its result,
// and its stale window keeps it long enough to be extended rather than fetched again.
import type { CacheEntry, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import { YAHOO } from '../core/upstream-ids.js';
import { INTRADAY_SIZES, SERIES_SPANS, type SeriesSize } from '../upstreams/yahoo/chart-spans.js';
import { type ChartSeries, mergeSeries, readChartSeries, trimSeries } from '../upstreams/yahoo/chart-series.js';
import type { YahooChartSource } from '../upstreams/yahoo/yahoo-chart-source.js';
import { yahooKeys } from './cache-keys.js';

/** A series: its Yahoo symbol and bar size. */
export interface SeriesRef {
  symbol: string;
  size: SeriesSize;
}

export interface BarStoreOptions {
  cache: UpstreamCache;
  chart: YahooChartSource;
  /** Yahoo's state scope: every stored key starts with it. */
  scope: string;
  /** Per kind of series: fresh = the shortest window a reader holds it to; stale = how long it is kept after. */
  windows: { daily: CacheWindow; intraday: CacheWindow };
}

const DAY_MS = 86_400_000;

export class BarStore {
  /** Refreshes by how they went: extended with the recent range, fetched whole (first time or again), and why again. */
  readonly counters = { extended: 0, fetched: 0, gap: 0, changed: 0 };

  constructor(private readonly options: BarStoreOptions) {}

  key({ symbol, size }: SeriesRef): string {
    return yahooKeys.bars(this.options.scope, symbol, size);
  }

  /**
   * The stored series, however old (undefined: none): this process's copy when younger than `maxAgeMs`,
   * else the shared tier's, which another replica may have refreshed since.
   */
  async peek(ref: SeriesRef, maxAgeMs: number): Promise<CacheEntry<ChartSeries> | undefined> {
    const key = this.key(ref);
    const local = this.options.cache.store.getSync<ChartSeries>(key);
    if (local !== undefined && Date.now() - local.storedAt < maxAgeMs) return local;
    return this.options.cache.peek<ChartSeries>(key);
  }

  /**
   * Brings the series up to date now: one Yahoo call (two when it must be fetched whole again), shared by
   * every concurrent caller. A symbol Yahoo does not know is not asked again while the cache remembers its
   * 404 (CACHE_NOT_FOUND_SECONDS; its readers ask provider A meanwhile).
   */
  load(ref: SeriesRef): Promise<CacheEntry<ChartSeries>> {
    return this.options.cache.load(this.key(ref), this.window(ref), () => this.fetch(ref), { upstream: YAHOO });
  }

  /** As load, in the background (unless one runs, or the last failed moments ago). */
  refresh(ref: SeriesRef): void {
    this.options.cache.refresh(this.key(ref), this.window(ref), () => this.fetch(ref), { upstream: YAHOO });
  }

  private window(ref: SeriesRef): CacheWindow {
    return INTRADAY_SIZES.has(ref.size) ? this.options.windows.intraday : this.options.windows.daily;
  }

  private async fetch(ref: SeriesRef): Promise<ChartSeries> {
    const span = SERIES_SPANS[ref.size];
    const intraday = INTRADAY_SIZES.has(ref.size);
    const ask = (range: string) =>
      this.options.chart.fetchChart(ref.symbol, { range, interval: ref.size, prePost: span.prePost }, (chart) =>
        readChartSeries(chart, range, intraday, ref.symbol),
      );
    // Read inside the flight: the newest stored copy, whichever replica wrote it.
    const stored = (await this.options.cache.peek<ChartSeries>(this.key(ref)))?.value;
    if (stored !== undefined && stored.keys.length > 0) {
      const merged = mergeSeries(stored, await ask(span.recent));
      if (merged.kind === 'merged') {
        this.counters.extended += 1;
        return trimSeries(merged.series, keepFrom(merged.series, span.keepDays));
      }
      this.counters[merged.reason] += 1;
    }
    this.counters.fetched += 1;
    return (await ask(span.range)).series;
  }
}

/** The first date kept: `keepDays` before the newest bar's. */
function keepFrom(series: ChartSeries, keepDays: number): string {
  const newest = series.keys[series.keys.length - 1];
  if (newest === undefined) return '';
  return new Date(Date.parse(newest.slice(0, 10)) - keepDays * DAY_MS).toISOString().slice(0, 10);
}
