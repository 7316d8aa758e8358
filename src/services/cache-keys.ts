// Every key the services store upstream answers under, by area. Each key starts with the scope of the
// upstream whose answer it holds (store/upstream-identity.ts), so that answers of another mode, provider or
// account are never read as this one's; what follows says which call it is, with defaults made explicit so
// that calls meaning the same share one key. A value whose stored shape gains a required field gets a new
// key (`quotes2`: quotes with their freshness), so a value stored by an older version is never served in
// a shape the route's schema refuses.
import type { ForwardCall, TechnicalQuery } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import type { SeriesSize } from '../upstreams/yahoo/chart-spans.js';
import { indicatorSpec } from '../wire/alpha-vantage/indicators.js';
import type { SeriesQuery } from '../wire/alpha-vantage/time-series.js';

/** Provider A (Alpha Vantage), and the Yahoo values computed in its place under Yahoo's scope. */
export const alphaVantageKeys = {
  quote: (scope: string, symbol: string) => `${scope}:quote:${symbol}`,
  /** `query` canonical: time period and series type exactly when the indicator takes them. */
  technical: (scope: string, { indicator, symbol, interval, timePeriod, seriesType, extra, month }: TechnicalQuery) =>
    `${scope}:tech:${indicator}:${symbol}:${interval}:${timePeriod ?? '-'}:${seriesType ?? '-'}${optionsKey(indicator, extra, month)}`,
  /** Matching is case-insensitive upstream. */
  search: (scope: string, keywords: string) => `${scope}:search:${keywords.toLowerCase()}`,
  /** `query` canonical (SeriesService): the defaults of its function filled in, the rest undefined. */
  series: (scope: string, { fn, symbol, outputsize, interval, month, extendedHours, adjusted }: SeriesQuery) =>
    `${scope}:series:${fn}:${symbol}:${outputsize ?? '-'}:${interval ?? '-'}:${month ?? '-'}:${extendedHours ?? '-'}:${adjusted ?? '-'}`,
  /** A forwarded call, its parameters in the documented order (AlphaVantageQuery) and encoded; CSV under its own key. */
  forwarded: (scope: string, { fn, params, format }: ForwardCall) =>
    `${scope}:fn:${fn}:${format}:${new URLSearchParams(params as [string, string][]).toString()}`,
};

/** Yahoo: the stored bar series, the overview and its instruments. */
export const yahooKeys = {
  bars: (scope: string, symbol: string, size: SeriesSize) => `${scope}:bars:${size}:${symbol}`,
  overview: (scope: string, symbols: readonly string[]) => `${scope}:overview2:${symbols.join(',')}`,
  instrument: (scope: string, symbol: string) => `${scope}:instrument2:${symbol}`,
};

/** Provider B (Massive): a page is its symbol (or every stock), its size and the upstream cursor it starts at. */
export const massiveKeys = {
  dividends: (scope: string, symbol: string | null, limit: number, cursor: string | null) =>
    `${scope}:div:${symbol ?? '*'}:${limit}:${cursor ?? '-'}`,
};

/** The broker BROKER names. */
export const brokerKeys = {
  accounts: (scope: string) => `${scope}:accounts`,
  positions: (scope: string) => `${scope}:positions2`,
  /** `symbols` sorted and distinct, so any order of one set shares an entry. */
  quotes: (scope: string, symbols: readonly string[]) => `${scope}:quotes2:${symbols.join(',')}`,
};

/** Extra parameters that differ from their defaults, and the month: calls with defaults share one key. */
function optionsKey(indicator: string, extra: TechnicalQuery['extra'], month: string | undefined): string {
  const defaults = indicatorSpec(indicator)?.extra ?? {};
  const changed = Object.entries(extra ?? {}).filter(([name, value]) => defaults[name] !== value);
  const parts = changed.map(([name, value]) => `${name}=${value}`);
  if (month !== undefined) parts.push(`month=${month}`);
  return parts.length === 0 ? '' : `:${parts.join(',')}`;
}
