// Yahoo Finance v8 chart answers, classified without I/O so every recorded body can be tested: the price,
// the previous daily close (previousCloseOf), the time of the price, and how fresh it is (chartFreshness).
// Close arrays may hold nulls.
import { ApiError, NotFoundAnswerError, UnreadableAnswerError } from '../../core/errors.js';
import { type Freshness, instant, type MarketState } from '../../core/freshness.js';
import { retryAfterMs } from '../retry-after.js';
import { categoryFromSymbol, type InstrumentCategory, type InstrumentSnapshot } from '../overview-source.js';
import { displayName } from './display-name.js';

export interface ChartResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

export type Classified<T> =
  | { kind: 'data'; value: T }
  | { kind: 'refusal'; message: string; retryAfterMs: number }
  | { kind: 'error'; error: ApiError };

/** One chart: its `meta`, and the whole result (timestamps and indicator arrays) for bar readers. */
export interface ChartResult {
  meta: Record<string, unknown>;
  result: Record<string, unknown>;
}

const DEFAULT_BACKOFF_MS = 60_000;

/** Status first (429 is a refusal, 404 an unknown symbol), then the body, read by `parse`. */
export function classifyChart<T>(
  res: ChartResponse,
  symbol: string,
  parse: (chart: ChartResult, symbol: string) => T,
  now = Date.now(),
): Classified<T> {
  if (res.status === 429) {
    return {
      kind: 'refusal',
      message: 'Yahoo refused the call: too many requests',
      retryAfterMs: retryAfterMs(res.headers['retry-after'], DEFAULT_BACKOFF_MS, now),
    };
  }
  // Only the chart's own "Not Found" is Yahoo saying it has no such symbol (remembered); a 404 of another
  // shape (a wrong YAHOO_URL path, an edge page) says nothing about the symbol.
  if (res.status === 404)
    return {
      kind: 'error',
      error: saysNotFound(res.json) ? notFound(symbol) : new ApiError('SYMBOL_NOT_FOUND', `Yahoo has no data for ${symbol}`),
    };
  if (res.status !== 200)
    return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', `Yahoo answered HTTP ${res.status} for ${symbol}`) };
  try {
    return { kind: 'data', value: parse(chartResult(res.json, symbol), symbol) };
  } catch (e) {
    return { kind: 'error', error: e instanceof ApiError ? e : unexpected(symbol, 'chart-unreadable', 'an unreadable chart') };
  }
}

/** The chart the overview reads: one day of daily bars, whose chartPreviousClose is the previous session's close. */
export const OVERVIEW_CHART = { range: '1d', interval: '1d' } as const;

/** `range` is the one the chart was asked for (previousCloseOf): a `period1`/`period2` chart has none, pass ''. */
export function classifyChartResponse(
  res: ChartResponse,
  symbol: string,
  range: string = OVERVIEW_CHART.range,
  now = Date.now(),
): Classified<InstrumentSnapshot> {
  return classifyChart(res, symbol, (chart) => instrumentSnapshot(chart, symbol, range, now), now);
}

/** The first result of a chart body, checked to be the chart of `symbol`. @internal */
export function chartResult(json: unknown, symbol: string): ChartResult {
  const chart = isObject(json) ? json.chart : undefined;
  if (json === undefined) throw unexpected(symbol, 'not-json', 'a body that is not JSON');
  if (!isObject(chart)) throw unexpected(symbol, 'chart-body', 'a body without "chart"');
  if (isObject(chart.error)) {
    if (saysNotFound(json)) throw notFound(symbol);
    throw unexpected(symbol, 'chart-error', 'an error');
  }
  const result = Array.isArray(chart.result) ? chart.result[0] : undefined;
  if (!isObject(result) || !isObject(result.meta)) throw unexpected(symbol, 'chart-meta', 'a chart without "meta"');
  const meta = result.meta;
  if (typeof meta.symbol === 'string' && meta.symbol.toUpperCase() !== symbol.toUpperCase())
    throw unexpected(symbol, 'chart-symbol', `the chart of ${meta.symbol.slice(0, 20)}`);
  return { meta, result };
}

function instrumentSnapshot({ meta, result }: ChartResult, symbol: string, range: string, now: number): InstrumentSnapshot {
  const bar = lastBar(result);
  const price = finite(meta.regularMarketPrice) ?? bar?.close;
  if (price === undefined) throw unexpected(symbol, 'chart-no-price', 'no price');
  const previousClose = previousCloseOf(meta, range);
  if (previousClose === undefined) throw unexpected(symbol, 'chart-no-previous-close', 'no previous close');
  const time = finite(meta.regularMarketTime) ?? bar?.time;
  if (time === undefined) throw unexpected(symbol, 'chart-no-time', 'no time for the price');

  return {
    symbol: symbol.toUpperCase(),
    price,
    previousClose,
    currency: text(meta.currency),
    name: displayName(meta.shortName, meta.longName, symbol),
    category: categoryOf(text(meta.instrumentType), symbol),
    asOf: new Date(time * 1000).toISOString(),
    freshness: chartFreshness(time, tradingPeriodsOf(meta), now),
  };
}

/** One trading period, ms since epoch, start inclusive and end exclusive. */
type Period = readonly [number, number];

/** A chart's `currentTradingPeriod`: the pre-market, regular session and post-market of the current (or last) trading day. */
export interface TradingPeriods {
  pre?: Period;
  regular: Period;
  post?: Period;
}

/** `meta.currentTradingPeriod` in ms; undefined when the chart has none with a readable regular session. */
export function tradingPeriodsOf(meta: Record<string, unknown>): TradingPeriods | undefined {
  const periods = isObject(meta.currentTradingPeriod) ? meta.currentTradingPeriod : undefined;
  const read = (name: string): Period | undefined => {
    const p = periods?.[name];
    const start = isObject(p) ? finite(p.start) : undefined;
    const end = isObject(p) ? finite(p.end) : undefined;
    return start !== undefined && end !== undefined && end >= start ? [start * 1000, end * 1000] : undefined;
  };
  const regular = read('regular');
  if (regular === undefined) return undefined;
  const [pre, post] = [read('pre'), read('post')];
  return { regular, ...(pre === undefined ? {} : { pre }), ...(post === undefined ? {} : { post }) };
}

/**
 * How fresh a chart's regular-market price is, when the chart was answered at `now` (ms): `regularMarketTime`
 * (s) against `currentTradingPeriod`. The market's state is where `now` falls in the periods (closed outside
 * them: overnight, a weekend, a holiday). Outside the regular session the price is the last session's close:
 * end-of-day. In it, a price from before the session opened stands in for a trade not yet made: prior-close;
 * a price from the session is live, but Yahoo's chart states no delay, so its kind is unknown. A chart
 * without periods says nothing of its market: unknown. `asOf` is regularMarketTime.
 */
export function chartFreshness(marketTimeSeconds: number, periods: TradingPeriods | undefined, now: number): Freshness {
  const at = marketTimeSeconds * 1000;
  const asOf = instant(at);
  if (periods === undefined) return { kind: 'unknown', asOf };
  // Clocks differ: an answer is never older than the price it carries.
  const market = marketState(periods, Math.max(now, at));
  if (market !== 'regular') return { kind: 'end-of-day', asOf, market };
  return { kind: at >= periods.regular[0] ? 'unknown' : 'prior-close', asOf, market };
}

function marketState(periods: TradingPeriods, at: number): MarketState {
  const within = (p: Period | undefined) => p !== undefined && at >= p[0] && at < p[1];
  if (within(periods.regular)) return 'regular';
  if (within(periods.pre)) return 'pre';
  if (within(periods.post)) return 'post';
  return 'closed';
}

/**
 * The previous session's close, as the chart of `range` tells it. Daily and longer charts carry no
 * `previousClose` (recorded answers), only `chartPreviousClose`: the close before the chart's *range*,
 * which is the previous session's close only when the range is one day.
 */
export function previousCloseOf(meta: Record<string, unknown>, range: string): number | undefined {
  return (
    finite(meta.previousClose) ?? finite(meta.regularMarketPreviousClose) ?? (range === '1d' ? finite(meta.chartPreviousClose) : undefined)
  );
}

/** The newest bar whose close is not null: Yahoo leaves nulls for bars still forming or missing. */
function lastBar(result: Record<string, unknown>): { close: number; time: number | undefined } | undefined {
  const indicators = isObject(result.indicators) ? result.indicators : undefined;
  const quote = Array.isArray(indicators?.quote) ? indicators.quote[0] : undefined;
  const closes = isObject(quote) && Array.isArray(quote.close) ? quote.close : [];
  const times = Array.isArray(result.timestamp) ? result.timestamp : [];
  for (let i = closes.length - 1; i >= 0; i -= 1) {
    const close = finite(closes[i]);
    if (close !== undefined) return { close, time: finite(times[i]) };
  }
  return undefined;
}

const TYPE_CATEGORY: Record<string, InstrumentCategory> = {
  INDEX: 'index',
  FUTURE: 'commodity',
  CRYPTOCURRENCY: 'crypto',
  CURRENCY: 'currency',
  EQUITY: 'equity',
  ETF: 'equity',
  // A mutual fund is no equity: its price is a net asset value, struck once a day.
  MUTUALFUND: 'fund',
};

/** @internal */
export function categoryOf(instrumentType: string | null, symbol: string): InstrumentCategory {
  return (instrumentType !== null ? TYPE_CATEGORY[instrumentType.toUpperCase()] : undefined) ?? categoryFromSymbol(symbol);
}

export function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A non-empty string, trimmed, runs of spaces as one; null for none. */
function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().replace(/\s+/g, ' ') : null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `{"chart":{"result":null,"error":{"code":"Not Found","description":"No data found, symbol may be delisted"}}}`. */
function saysNotFound(json: unknown): boolean {
  const chart = isObject(json) ? json.chart : undefined;
  return isObject(chart) && isObject(chart.error) && /not found/i.test(String(chart.error.code ?? ''));
}

function notFound(symbol: string): NotFoundAnswerError {
  return new NotFoundAnswerError(`Yahoo has no data for ${symbol}`);
}

/** A chart this service cannot read; `drift` is the reason it is counted under (a metrics label). */
export function unexpected(symbol: string, drift: string, what: string): UnreadableAnswerError {
  return new UnreadableAnswerError(drift, `Yahoo sent ${what} for ${symbol}`);
}
