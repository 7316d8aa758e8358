// A simulated Yahoo Finance v8 chart server: GET /v8/finance/chart/<SYM>?range=..&interval=.. (or
// period1=..&period2=.. in Unix seconds, as the real API takes too) with the real body shape, held to the
// recorded corpus by test/contract/yahoo-conformance.test.ts: meta with currentTradingPeriod (intraday
// charts also scale, previousClose and, when they have bars, tradingPeriods), timestamp, indicators.quote
// with nulls where bars are missing, indicators.adjclose on daily and longer charts; a chart without bars has
// no timestamp and `quote: [{}]`. The real 404 body for unknown symbols, 400 for bad input, and Yahoo's edge
// 429 (plain text) for clients without a browser-like User-Agent. Bars are the shared session bars
// (../session-bars.ts, the ones the Alpha Vantage simulator serves): daily bars the regular session,
// intraday bars of the regular session unless `includePrePost=true` asks for the pre- and post-market too
// (stocks and ETFs), as the real API does; bar prices are float32, as Yahoo sends them.
// Intraday history stops at Yahoo's limits (422 beyond), so the service's chart spans are checked against
// them. Beyond the base fault switches, quirks reproduce the ugly answers (no previousClose, null closes, no
// regularMarketPrice) and one symbol can be made to fail.
import { type Bar, priceAt, unit } from '../price-model.js';
import { aggregateBars, cents, intradayBar, sessionBar } from '../session-bars.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { type ChartInstrument, chartInstrument } from './chart-instruments.js';
import {
  exchangeOffset,
  lastCloseBefore,
  lastExtendedTradeTime,
  lastTradeTime,
  sessionClose,
  sessionOpen,
  sessionsBetween,
} from './market-clock.js';

const CHART_PREFIX = '/v8/finance/chart/';

export interface YahooQuirks {
  /** Leave `previousClose` out of intraday charts' meta too (daily charts never have it). */
  omitPreviousClose: boolean;
  /** Leave `regularMarketPrice` out of meta (clients must use the last non-null close). */
  omitMarketPrice: boolean;
  /** Null out the newest bar, as Yahoo does for a bar still forming. */
  nullLastBar: boolean;
  /** No odd empty intraday bar: every bar Alpha Vantage's series has, for comparing the two. */
  noEmptyBars: boolean;
}

export interface YahooSimulatorOptions {
  /** Answer 429 to clients whose User-Agent is not browser-like (default true, like Yahoo). */
  requireBrowserUserAgent?: boolean;
  now?: () => number;
  host?: string;
  port?: number;
}

const NO_QUIRKS: YahooQuirks = { omitPreviousClose: false, omitMarketPrice: false, nullLastBar: false, noEmptyBars: false };
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
const TOO_MANY_REQUESTS = 'Edge: Too Many Requests';

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
    const now = this.now();
    // Pre- and post-market bars only when asked for, on intraday charts of what trades then (stocks and ETFs).
    const prePost = query.get('includePrePost') === 'true' && step < DAY_MS && hasPrePost(instrument);
    const marketTime = lastTradeTime(instrument.session, now);
    const barsEnd = prePost ? lastExtendedTradeTime(now) : marketTime;
    const ask: ChartAsk = { interval, step, prePost, marketTime, barsEnd };
    // period1/period2 win over range, as on the real API; a dated chart's meta.range is "".
    if (query.get('period1') !== null) {
      const window = periodWindow(query.get('period1'), query.get('period2'), now);
      if (typeof window === 'string') return badInput(window);
      const tooOld = periodLimit(step, interval, window, now);
      if (tooOld !== undefined) return unprocessable(tooOld);
      return this.chart(instrument, { range: '', from: window.from, to: Math.min(window.to, barsEnd) }, ask);
    }
    const range = query.get('range') ?? '1mo';
    if (RANGES[range] === undefined)
      return badInput(`Invalid input - range=${range} is not supported. Valid ranges: [${Object.keys(RANGES).join(', ')}]`);
    const limit = historyLimitDays(step);
    if ((RANGES[range] as number) > limit) {
      return unprocessable(`${interval} data not available for range=${range}. The requested range must be within the last ${limit} days.`);
    }
    return this.chart(instrument, { range, from: rangeStartOf(instrument, range, barsEnd, prePost), to: barsEnd }, ask);
  }

  private chart(instrument: ChartInstrument, window: ChartWindow, ask: ChartAsk): SimResponse {
    const { interval, step, prePost, marketTime, barsEnd } = ask;
    const { range, from: rangeStart } = window;
    const live = window.to >= barsEnd;
    const emptyBars = step < DAY_MS && !this.quirks.noEmptyBars;
    const bars = barsFor(instrument, window, step, prePost, live ? barsEnd : Number.POSITIVE_INFINITY, emptyBars);
    if (bars === undefined) return unprocessable(`${interval} data not available for this range`);
    const { session, priceKey } = instrument;
    const open = sessionOpen(session, marketTime);
    // Today's session so far: the daily chart's newest bar, and the day's range and volume in meta.
    const day = sessionBar(priceKey, open, sessionClose(session, open), marketTime);
    const price = day.close;
    const intraday = step < DAY_MS;
    const meta: Record<string, unknown> = {
      currency: instrument.currency,
      symbol: instrument.symbol,
      exchangeName: instrument.exchangeName,
      fullExchangeName: instrument.fullExchangeName,
      instrumentType: instrument.instrumentType,
      firstTradeDate: 1_262_304_000,
      regularMarketTime: Math.floor(marketTime / 1000),
      hasPrePostMarketData: hasPrePost(instrument),
      ...exchangeOffset(session, marketTime),
      exchangeTimezoneName: instrument.exchangeTimezoneName,
      regularMarketPrice: price,
      fiftyTwoWeekHigh: cents(day.high * 1.18),
      fiftyTwoWeekLow: cents(day.low * 0.82),
      regularMarketDayHigh: day.high,
      regularMarketDayLow: day.low,
      regularMarketVolume: day.volume,
      longName: instrument.longName,
      shortName: instrument.shortName,
      // The close before the chart's range: for a one-day range, the previous session's close.
      chartPreviousClose: closeBefore(instrument, rangeStart),
      previousClose: closeBefore(instrument, open),
      scale: 3,
      priceHint: 2,
      currentTradingPeriod: currentTradingPeriod(instrument, marketTime),
      tradingPeriods: tradingPeriods(instrument, bars.timestamp, prePost),
      dataGranularity: interval,
      range,
      validRanges: Object.keys(RANGES),
    };
    // Recorded answers: daily and longer charts carry no previousClose (only chartPreviousClose, the close
    // before the range), no scale and no tradingPeriods; intraday ones carry previousClose and scale, and
    // tradingPeriods when they have bars (the recorded weekend chart has none).
    if (!intraday || this.quirks.omitPreviousClose) delete meta.previousClose;
    if (!intraday) delete meta.scale;
    if (!intraday || bars.timestamp.length === 0) delete meta.tradingPeriods;
    if (this.quirks.omitMarketPrice) delete meta.regularMarketPrice;
    if (this.quirks.nullLastBar && bars.timestamp.length > 0) nullBar(bars, bars.timestamp.length - 1);
    const { timestamp, ...prices } = bars;
    // Yahoo sends bar prices as float32 values (recorded: 282.2799987792969 for 282.28), meta prices as written.
    const quote = {
      open: prices.open.map(float32),
      high: prices.high.map(float32),
      low: prices.low.map(float32),
      close: prices.close.map(float32),
      volume: prices.volume,
    };
    const empty = timestamp.length === 0;
    // A chart without bars has no timestamp key and empty objects for its arrays (recorded weekend and holiday charts).
    const indicators: Record<string, unknown> = { quote: [empty ? {} : quote] };
    // Daily and longer charts carry adjusted closes; the price model has no splits or dividends, so they are the closes.
    if (!intraday) indicators.adjclose = [empty ? {} : { adjclose: [...quote.close] }];
    const result = empty ? { meta, indicators } : { meta, timestamp, indicators };
    return { status: 200, body: { chart: { result: [result], error: null } } };
  }
}

/** What a chart request asks for, and the clock it is answered on. */
interface ChartAsk {
  interval: string;
  step: number;
  /** Intraday bars of the extended hours too (includePrePost=true on a stock or ETF). */
  prePost: boolean;
  /** The last trade of the regular session (regularMarketTime). */
  marketTime: number;
  /** Where the chart's bars end: marketTime, or the last pre- or post-market trade. */
  barsEnd: number;
}

interface ChartWindow {
  /** As meta.range reports it: "" for a period1/period2 chart. */
  range: string;
  from: number;
  to: number;
}

/** Stocks and ETFs trade before and after the regular session; indices, futures and crypto do not have such bars. */
function hasPrePost(instrument: ChartInstrument): boolean {
  return instrument.session === 'us-equity' && (instrument.instrumentType === 'EQUITY' || instrument.instrumentType === 'ETF');
}

const float32 = (value: number | null): number | null => (value === null ? null : Math.fround(value));

/** The session close before `time`, in cents (a session's last price). */
function closeBefore(instrument: ChartInstrument, time: number): number {
  return cents(priceAt(instrument.priceKey, lastCloseBefore(instrument.session, time)));
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
  const { timezone, gmtoffset } = exchangeOffset(instrument.session, start);
  return { timezone, start: Math.floor(start / 1000), end: Math.floor(end / 1000), gmtoffset };
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

/**
 * The sessions of the days the bars fall in, one list per day (recorded ^TNX range=1d 5m); with pre- and
 * post-market bars, one such list per part of the day under `pre`, `regular` and `post` (as clients of
 * the real API read them; no recording has one).
 */
function tradingPeriods(instrument: ChartInstrument, timestamps: readonly number[], prePost: boolean): unknown {
  const { session } = instrument;
  const opens = [...new Set(timestamps.map((t) => sessionOpen(session, t * 1000)))];
  const regular = opens.map((open) => [period(instrument, open, sessionClose(session, open))]);
  if (!prePost) return regular;
  return {
    pre: opens.map((open) => [period(instrument, open - 5.5 * HOUR_MS, open)]),
    regular,
    post: opens.map((open) => [period(instrument, open + 6.5 * HOUR_MS, open + 10.5 * HOUR_MS)]),
  };
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

/** A one-day range starts with the day's session (its pre-market when the chart has one). */
function rangeStartOf(instrument: ChartInstrument, range: string, end: number, prePost: boolean): number {
  if (range !== '1d') return end - (RANGES[range] as number) * DAY_MS;
  const open = sessionOpen(instrument.session, end - MINUTE_MS);
  return prePost ? open - 5.5 * HOUR_MS : open;
}

/**
 * The bars of a window: the sessions' daily bars, or intraday bars on each part of a session (pre-market,
 * regular, post-market) stamped from that part's start, so a 60m bar of the regular session starts at
 * 09:30 as Yahoo's do, while every 5m, 15m or 30m bar starts on the clock's grid. A range chart starts with
 * the bar holding its start, a dated one with the first bar inside it; bars are cut at `until` (the last
 * trade, on a chart that reaches it). Undefined when the window holds more bars than Yahoo serves.
 */
function barsFor(
  instrument: ChartInstrument,
  window: ChartWindow,
  step: number,
  prePost: boolean,
  until: number,
  emptyBars: boolean,
): Bars | undefined {
  const { from, to } = window;
  const dated = window.range === '';
  const bars: Bars = { timestamp: [], open: [], high: [], low: [], close: [], volume: [] };
  const push = (bar: Bar | undefined, start: number) => {
    if (bar === undefined) return;
    bars.timestamp.push(Math.floor(start / 1000));
    bars.open.push(bar.open);
    bars.high.push(bar.high);
    bars.low.push(bar.low);
    bars.close.push(bar.close);
    bars.volume.push(bar.volume);
  };
  const intraday = step < DAY_MS;
  if ((to - from) / step > MAX_BARS * (intraday ? 3 : 1)) return undefined;
  // A session's pre-market starts 5.5 hours before its opening, its post-market ends 4 hours after its close.
  const reach = prePost ? { before: 4 * HOUR_MS, after: 5.5 * HOUR_MS } : { before: intraday ? 0 : step, after: 0 };
  const sessions = sessionsBetween(instrument.session, from - reach.before, to + reach.after);
  if (!intraday) {
    const daily = sessions.filter(([open, close]) => (dated ? open >= from : close > from));
    for (const group of groupedBy(daily, step)) {
      const first = group[0] as [number, number];
      push(aggregateBars(group.map(([open, close]) => sessionBar(instrument.priceKey, open, close, until))), first[0]);
    }
  } else {
    for (const [open, close] of sessions) {
      const parts: Array<[number, number]> = prePost
        ? [
            [open - 5.5 * HOUR_MS, open],
            [open, close],
            [close, close + 4 * HOUR_MS],
          ]
        : [[open, close]];
      for (const [partStart, partEnd] of parts) {
        for (let t = partStart; t < partEnd && t <= to; t += step) {
          const end = Math.min(t + step, partEnd);
          if (dated ? t < from : end <= from) continue;
          push(intradayBar(instrument.priceKey, t, end - t, until), t);
          // Yahoo's intraday series have the odd empty bar.
          if (emptyBars && unit(`null-bar:${instrument.symbol}:${t}`) < 0.03 && bars.timestamp.at(-1) === Math.floor(t / 1000))
            nullBar(bars, bars.timestamp.length - 1);
        }
      }
    }
  }
  if (bars.timestamp.length > MAX_BARS) return undefined;
  return bars;
}

/** Sessions grouped into bars of `step` (one session each for daily bars), counted from the first. */
function groupedBy(sessions: Array<[number, number]>, step: number): Array<Array<[number, number]>> {
  if (step <= DAY_MS) return sessions.map((s) => [s]);
  const groups = new Map<number, Array<[number, number]>>();
  const first = sessions[0]?.[0] ?? 0;
  for (const s of sessions) {
    const g = Math.floor((s[0] - first) / step);
    groups.set(g, [...(groups.get(g) ?? []), s]);
  }
  return [...groups.values()];
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
