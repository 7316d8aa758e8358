// A simulated Yahoo Finance v8 chart server: GET /v8/finance/chart/<SYM>?range=..&interval=.. (or
// period1=..&period2=.. in Unix seconds, as the real API takes too) with the real body shape, held to the
// recorded corpus by test/contract/yahoo-conformance.test.ts: meta with currentTradingPeriod (intraday
// charts also scale, previousClose and, when they have bars, tradingPeriods), timestamp, indicators.quote
// with nulls where bars are missing, indicators.adjclose on daily and longer charts; a chart without bars has
// no timestamp and `quote: [{}]`. The real 404 body for unknown symbols, 400 for bad input, and Yahoo's edge
// 429 (plain text) for clients without a browser-like User-Agent. Prices come from the shared price model.
// Intraday history stops at Yahoo's limits (422 beyond), so the service's chart spans are checked against
// them. Beyond the base fault switches, quirks reproduce the ugly answers (no previousClose, null closes, no
// regularMarketPrice) and one symbol can be made to fail.
import { barAt, previousClose, priceAt, round, unit } from '../price-model.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { type ChartInstrument, chartInstrument } from './chart-instruments.js';
import { isOpen, isTradingDay, lastTradeTime, sessionClose, sessionOpen } from './market-clock.js';

export const CHART_PREFIX = '/v8/finance/chart/';

export interface YahooQuirks {
  /** Leave `previousClose` out of intraday charts' meta too (daily charts never have it). */
  omitPreviousClose: boolean;
  /** Leave `regularMarketPrice` out of meta (clients must use the last non-null close). */
  omitMarketPrice: boolean;
  /** Null out the newest bar, as Yahoo does for a bar still forming. */
  nullLastBar: boolean;
}

export interface YahooSimulatorOptions {
  /** Answer 429 to clients whose User-Agent is not browser-like (default true, like Yahoo). */
  requireBrowserUserAgent?: boolean;
  now?: () => number;
  host?: string;
  port?: number;
}

const NO_QUIRKS: YahooQuirks = { omitPreviousClose: false, omitMarketPrice: false, nullLastBar: false };
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const RANGES: Record<string, number> = {
  '1d': 1,
  '5d': 5,
  '1mo': 30,
  '3mo': 91,
  '6mo': 182,
  '1y': 365,
  '2y': 730,
  '5y': 1826,
  '10y': 3652,
  max: 3652,
};
const INTERVALS: Record<string, number> = {
  '1m': MINUTE_MS,
  '2m': 2 * MINUTE_MS,
  '5m': 5 * MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '60m': HOUR_MS,
  '90m': 90 * MINUTE_MS,
  '1h': HOUR_MS,
  '1d': DAY_MS,
  '5d': 5 * DAY_MS,
  '1wk': 7 * DAY_MS,
  '1mo': 30 * DAY_MS,
  '3mo': 91 * DAY_MS,
};
const MAX_BARS = 5_000;
/** Yahoo's edge refuses in plain text (recorded: too-many-requests-429-getcrumb). */
export const TOO_MANY_REQUESTS = 'Edge: Too Many Requests';

/** The path a chart request for `symbol` is counted under (`^GSPC` -> `/v8/finance/chart/%5EGSPC`). */
export function chartPath(symbol: string): string {
  return CHART_PREFIX + encodeURIComponent(symbol);
}

interface Bars {
  timestamp: number[];
  open: (number | null)[];
  high: (number | null)[];
  low: (number | null)[];
  close: (number | null)[];
  volume: (number | null)[];
}

export class YahooSimulator extends SimulatedUpstream {
  private quirks: YahooQuirks = { ...NO_QUIRKS };
  private readonly failing = new Map<string, number>();
  private readonly requireBrowserUserAgent: boolean;
  private readonly now: () => number;

  constructor(options: YahooSimulatorOptions = {}) {
    super({ name: 'yahoo', host: options.host, port: options.port, handler: (req) => (this as YahooSimulator).answer(req) });
    this.requireBrowserUserAgent = options.requireBrowserUserAgent ?? true;
    this.now = options.now ?? Date.now;
  }

  setQuirks(quirks: Partial<YahooQuirks>): void {
    this.quirks = { ...NO_QUIRKS, ...quirks };
  }

  /** Makes every chart request for `symbol` answer `status` (500, 404 or 429) until cleared. */
  failSymbol(symbol: string, status = 500): void {
    this.failing.set(symbol.toUpperCase(), status);
  }

  clearSymbolFaults(): void {
    this.failing.clear();
  }

  private answer(req: SimRequest): SimResponse {
    if (!req.url.pathname.startsWith(CHART_PREFIX)) {
      return { status: 404, body: { finance: { result: null, error: { code: 'Not Found', description: 'HTTP 404 Not Found' } } } };
    }
    if (this.requireBrowserUserAgent && !/Mozilla\/\d/.test(String(req.headers['user-agent'] ?? ''))) return tooManyRequests();
    let symbol: string;
    try {
      symbol = decodeURIComponent(req.url.pathname.slice(CHART_PREFIX.length));
    } catch {
      return notFound();
    }
    const forced = this.failing.get(symbol.toUpperCase());
    if (forced !== undefined) return forcedFailure(forced);
    const instrument = chartInstrument(symbol);
    if (instrument === undefined) return notFound();

    const query = req.url.searchParams;
    const interval = query.get('interval') ?? '1d';
    const step = INTERVALS[interval];
    if (step === undefined)
      return badInput(`Invalid input - interval=${interval} is not supported. Valid intervals: [${Object.keys(INTERVALS).join(', ')}]`);
    const marketTime = lastTradeTime(instrument.session, this.now());
    // period1/period2 win over range, as on the real API; a dated chart's meta.range is "".
    if (query.get('period1') !== null) {
      const window = periodWindow(query.get('period1'), query.get('period2'), this.now());
      if (typeof window === 'string') return badInput(window);
      const tooOld = periodLimit(step, interval, window, this.now());
      if (tooOld !== undefined) return unprocessable(tooOld);
      return this.chart(instrument, { range: '', from: window.from, to: Math.min(window.to, marketTime) }, interval, step, marketTime);
    }
    const range = query.get('range') ?? '1mo';
    if (RANGES[range] === undefined)
      return badInput(`Invalid input - range=${range} is not supported. Valid ranges: [${Object.keys(RANGES).join(', ')}]`);
    const limit = historyLimitDays(step);
    if ((RANGES[range] as number) > limit) {
      return unprocessable(`${interval} data not available for range=${range}. The requested range must be within the last ${limit} days.`);
    }
    return this.chart(instrument, { range, from: rangeStartOf(instrument, range, marketTime), to: marketTime }, interval, step, marketTime);
  }

  private chart(instrument: ChartInstrument, window: ChartWindow, interval: string, step: number, marketTime: number): SimResponse {
    const { range, from: rangeStart } = window;
    const bars = barsFor(instrument, rangeStart, window.to, step, window.to >= marketTime);
    if (bars === undefined) return unprocessable(`${interval} data not available for this range`);
    const price = priceAt(instrument.priceKey, marketTime);
    const day = barAt(
      instrument.priceKey,
      sessionOpen(instrument.session, marketTime),
      Math.max(MINUTE_MS, marketTime - sessionOpen(instrument.session, marketTime)),
    );
    const meta: Record<string, unknown> = {
      currency: instrument.currency,
      symbol: instrument.symbol,
      exchangeName: instrument.exchangeName,
      fullExchangeName: instrument.fullExchangeName,
      instrumentType: instrument.instrumentType,
      firstTradeDate: 1_262_304_000,
      regularMarketTime: Math.floor(marketTime / 1000),
      hasPrePostMarketData: instrument.session === 'us-equity',
      gmtoffset: gmtOffsetOf(instrument),
      timezone: instrument.timezone,
      exchangeTimezoneName: instrument.exchangeTimezoneName,
      regularMarketPrice: round(price, 2),
      fiftyTwoWeekHigh: round(Math.max(price, day.high) * 1.18, 2),
      fiftyTwoWeekLow: round(Math.min(price, day.low) * 0.82, 2),
      regularMarketDayHigh: round(Math.max(price, day.high), 2),
      regularMarketDayLow: round(Math.min(price, day.low), 2),
      regularMarketVolume: day.volume,
      longName: instrument.longName,
      shortName: instrument.shortName,
      chartPreviousClose: round(previousClose(instrument.priceKey, rangeStart), 2),
      previousClose: round(previousClose(instrument.priceKey, marketTime), 2),
      scale: 3,
      priceHint: 2,
      currentTradingPeriod: currentTradingPeriod(instrument, marketTime),
      tradingPeriods: tradingPeriods(instrument, bars.timestamp),
      dataGranularity: interval,
      range,
      validRanges: Object.keys(RANGES),
    };
    const intraday = step < DAY_MS;
    // Recorded answers: daily and longer charts carry no previousClose (only chartPreviousClose, the close
    // before the range), no scale and no tradingPeriods; intraday ones carry previousClose and scale, and
    // tradingPeriods when they have bars (the recorded weekend chart has none).
    if (!intraday || this.quirks.omitPreviousClose) delete meta.previousClose;
    if (!intraday) delete meta.scale;
    if (!intraday || bars.timestamp.length === 0) delete meta.tradingPeriods;
    if (this.quirks.omitMarketPrice) delete meta.regularMarketPrice;
    if (this.quirks.nullLastBar && bars.timestamp.length > 0) nullBar(bars, bars.timestamp.length - 1);
    const { timestamp, ...quote } = bars;
    const empty = timestamp.length === 0;
    // A chart without bars has no timestamp key and empty objects for its arrays (recorded weekend and holiday charts).
    const indicators: Record<string, unknown> = { quote: [empty ? {} : quote] };
    // Daily and longer charts carry adjusted closes; the price model has no splits or dividends, so they are the closes.
    if (!intraday) indicators.adjclose = [empty ? {} : { adjclose: [...quote.close] }];
    const result = empty ? { meta, indicators } : { meta, timestamp, indicators };
    return { status: 200, body: { chart: { result: [result], error: null } } };
  }
}

interface ChartWindow {
  /** As meta.range reports it: "" for a period1/period2 chart. */
  range: string;
  from: number;
  to: number;
}

/** `period1`/`period2` as Unix seconds (period2 defaults to now), or the 400's description. */
function periodWindow(rawFrom: string | null, rawTo: string | null, now: number): { from: number; to: number } | string {
  const seconds = (raw: string | null) => (raw !== null && /^\d{1,12}$/.test(raw) ? Number(raw) * 1000 : undefined);
  const from = seconds(rawFrom);
  const to = rawTo === null ? now : seconds(rawTo);
  if (from === undefined) return `Invalid input - period1=${String(rawFrom).slice(0, 20)} is not a valid Unix time`;
  if (to === undefined) return `Invalid input - period2=${String(rawTo).slice(0, 20)} is not a valid Unix time`;
  if (to < from) return 'Invalid input - period1 must be before period2';
  return { from, to };
}

/**
 * Yahoo's limits on dated intraday charts, as its 422s word them: 1m bars for the last 30 days at most 7 days
 * a request, 60m for 730 days, other intraday steps for 60 days.
 */
function periodLimit(step: number, interval: string, window: { from: number; to: number }, now: number): string | undefined {
  if (step >= DAY_MS) return undefined;
  const ageDays = step === MINUTE_MS ? 30 : step === HOUR_MS ? 730 : 60;
  if (now - window.from > ageDays * DAY_MS) {
    return `${interval} data not available for startTime=${Math.floor(window.from / 1000)} and endTime=${Math.floor(window.to / 1000)}. The requested range must be within the last ${ageDays} days.`;
  }
  if (step === MINUTE_MS && window.to - window.from > 7 * DAY_MS)
    return 'Only 7 days worth of 1m granularity data are allowed to be fetched per request.';
  return undefined;
}

/** One trading period as Yahoo writes it: the zone's abbreviation, start, end and offset in seconds. */
function period(instrument: ChartInstrument, start: number, end: number): Record<string, unknown> {
  return {
    timezone: instrument.timezone,
    start: Math.floor(start / 1000),
    end: Math.floor(end / 1000),
    gmtoffset: gmtOffsetOf(instrument),
  };
}

/**
 * The session of the last trade: pre, regular and post. US stocks and indices have a pre-market from 04:00
 * and a post-market to 20:00 (New York); futures and crypto none, written as empty periods at the session's
 * edges (recorded GC=F, BTC-USD and ^TNX charts).
 */
function currentTradingPeriod(instrument: ChartInstrument, marketTime: number): Record<string, unknown> {
  const open = sessionOpen(instrument.session, marketTime - MINUTE_MS);
  const close = sessionClose(instrument.session, open);
  const prePost = instrument.session === 'us-equity';
  return {
    pre: period(instrument, prePost ? open - 5.5 * HOUR_MS : open, open),
    regular: period(instrument, open, close),
    post: period(instrument, close, prePost ? close + 4 * HOUR_MS : close),
  };
}

/** The regular session of each day the bars fall in, one list per day (recorded ^TNX range=1d 5m). */
function tradingPeriods(instrument: ChartInstrument, timestamps: readonly number[]): unknown[] {
  const opens = [...new Set(timestamps.map((t) => sessionOpen(instrument.session, t * 1000)))];
  return opens.map((open) => [period(instrument, open, sessionClose(instrument.session, open))]);
}

function gmtOffsetOf(instrument: ChartInstrument): number {
  return instrument.session === 'always' ? 0 : -18_000;
}

export function createYahooSimulator(options: YahooSimulatorOptions = {}): YahooSimulator {
  return new YahooSimulator(options);
}

/** Yahoo's intraday history: 1m bars for the last 7 days, 60m for 730, other intraday steps for 60. */
function historyLimitDays(step: number): number {
  if (step === MINUTE_MS) return 7;
  if (step === HOUR_MS) return 730;
  return step < DAY_MS ? 60 : Infinity;
}

function rangeStartOf(instrument: ChartInstrument, range: string, marketTime: number): number {
  if (range === '1d') return sessionOpen(instrument.session, marketTime);
  return marketTime - (RANGES[range] as number) * DAY_MS;
}

/**
 * Bars from `from` to `to`, open sessions only; when the chart reaches the last trade (`live`), the newest
 * closes at the current price. A dated chart starts with the first session that opens at or after `from`.
 */
function barsFor(instrument: ChartInstrument, from: number, to: number, step: number, live: boolean): Bars | undefined {
  const bars: Bars = { timestamp: [], open: [], high: [], low: [], close: [], volume: [] };
  const intraday = step < DAY_MS;
  const first = intraday ? (live ? Math.floor(from / step) : Math.ceil(from / step)) * step : firstSession(instrument, from, live);
  if ((to - first) / step > MAX_BARS * (intraday ? 3 : 1)) return undefined;
  for (let t = first; t <= to; t += step) {
    if (intraday ? !isOpen(instrument.session, t) : !isTradingDay(instrument.session, t)) continue;
    const bar = barAt(instrument.priceKey, t, Math.min(step, Math.max(MINUTE_MS, to - t)));
    bars.timestamp.push(Math.floor(t / 1000));
    bars.open.push(round(bar.open, 2));
    bars.high.push(round(bar.high, 2));
    bars.low.push(round(bar.low, 2));
    bars.close.push(round(bar.close, 2));
    bars.volume.push(bar.volume);
    // Yahoo's intraday series have the odd empty bar.
    if (intraday && unit(`null-bar:${instrument.symbol}:${t}`) < 0.03) nullBar(bars, bars.timestamp.length - 1);
  }
  if (bars.timestamp.length > MAX_BARS) return undefined;
  const last = bars.timestamp.length - 1;
  if (live && last >= 0) {
    const price = round(priceAt(instrument.priceKey, to), 2);
    bars.close[last] = price;
    bars.high[last] = Math.max(bars.high[last] ?? price, price);
    bars.low[last] = Math.min(bars.low[last] ?? price, price);
    bars.open[last] ??= price;
    bars.volume[last] ??= 0;
  }
  return bars;
}

/** A range chart starts with the session holding its start; a dated one with the first session opening in it. */
function firstSession(instrument: ChartInstrument, from: number, live: boolean): number {
  const open = sessionOpen(instrument.session, from);
  return live || open >= from ? open : open + DAY_MS;
}

function nullBar(bars: Bars, i: number): void {
  bars.open[i] = null;
  bars.high[i] = null;
  bars.low[i] = null;
  bars.close[i] = null;
  bars.volume[i] = null;
}

function notFound(): SimResponse {
  return {
    status: 404,
    body: { chart: { result: null, error: { code: 'Not Found', description: 'No data found, symbol may be delisted' } } },
  };
}

function tooManyRequests(): SimResponse {
  return { status: 429, body: TOO_MANY_REQUESTS, headers: { 'content-type': 'text/plain' } };
}

function unprocessable(description: string): SimResponse {
  return { status: 422, body: { chart: { result: null, error: { code: 'Unprocessable Entity', description } } } };
}

function badInput(description: string): SimResponse {
  return { status: 400, body: { chart: { result: null, error: { code: 'Bad Request', description } } } };
}

function forcedFailure(status: number): SimResponse {
  if (status === 404) return notFound();
  if (status === 429) return tooManyRequests();
  return { status, body: { chart: { result: null, error: { code: 'Internal Server Error', description: 'Internal Server Error' } } } };
}
