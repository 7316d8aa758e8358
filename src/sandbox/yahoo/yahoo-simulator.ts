// A simulated Yahoo Finance v8 chart server: GET /v8/finance/chart/<SYM>?range=..&interval=.. with the real
// body shape (meta, timestamp, indicators.quote with nulls where bars are missing), the real 404 body for
// unknown symbols, 400 for bad input, and a 429 for clients without a browser-like User-Agent, as Yahoo
// does. Prices come from the shared price model. Intraday ranges stop at Yahoo's limits (422 beyond), so
// the service's chart spans are checked against them. Beyond the base fault switches, quirks reproduce the
// ugly answers (no previousClose, null closes, no regularMarketPrice) and one symbol can be made to fail.
import { barAt, previousClose, priceAt, round, unit } from '../price-model.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { type ChartInstrument, chartInstrument } from './chart-instruments.js';
import { isOpen, isTradingDay, lastTradeTime, sessionOpen } from './market-clock.js';

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
const RANGES: Record<string, number> = { '1d': 1, '5d': 5, '1mo': 30, '3mo': 91, '6mo': 182, '1y': 365, '2y': 730, '5y': 1826, '10y': 3652, max: 3652 };
const INTERVALS: Record<string, number> = {
  '1m': MINUTE_MS, '2m': 2 * MINUTE_MS, '5m': 5 * MINUTE_MS, '15m': 15 * MINUTE_MS, '30m': 30 * MINUTE_MS, '60m': HOUR_MS,
  '90m': 90 * MINUTE_MS, '1h': HOUR_MS, '1d': DAY_MS, '5d': 5 * DAY_MS, '1wk': 7 * DAY_MS, '1mo': 30 * DAY_MS, '3mo': 91 * DAY_MS,
};
const MAX_BARS = 5_000;

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
    let self: YahooSimulator | undefined;
    super({ name: 'yahoo', host: options.host, port: options.port, handler: (req) => (self as YahooSimulator).answer(req) });
    self = this;
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
    if (this.requireBrowserUserAgent && !/Mozilla\/\d/.test(String(req.headers['user-agent'] ?? ''))) {
      return { status: 429, body: 'Too Many Requests\r\n' };
    }
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

    const range = req.url.searchParams.get('range') ?? '1mo';
    const interval = req.url.searchParams.get('interval') ?? '1d';
    if (RANGES[range] === undefined) return badInput(`Invalid input - range=${range} is not supported. Valid ranges: [${Object.keys(RANGES).join(', ')}]`);
    const step = INTERVALS[interval];
    if (step === undefined) return badInput(`Invalid input - interval=${interval} is not supported. Valid intervals: [${Object.keys(INTERVALS).join(', ')}]`);
    const limit = historyLimitDays(step);
    if ((RANGES[range] as number) > limit) {
      return { status: 422, body: { chart: { result: null, error: { code: 'Unprocessable Entity', description: `${interval} data not available for range=${range}. The requested range must be within the last ${limit} days.` } } } };
    }
    return this.chart(instrument, range, interval, step);
  }

  private chart(instrument: ChartInstrument, range: string, interval: string, step: number): SimResponse {
    const marketTime = lastTradeTime(instrument.session, this.now());
    const rangeStart = rangeStartOf(instrument, range, marketTime);
    const bars = barsFor(instrument, rangeStart, marketTime, step);
    if (bars === undefined) {
      return { status: 422, body: { chart: { result: null, error: { code: 'Unprocessable Entity', description: `${interval} data not available for this range` } } } };
    }
    const price = priceAt(instrument.priceKey, marketTime);
    const day = barAt(instrument.priceKey, sessionOpen(instrument.session, marketTime), Math.max(MINUTE_MS, marketTime - sessionOpen(instrument.session, marketTime)));
    const meta: Record<string, unknown> = {
      currency: instrument.currency,
      symbol: instrument.symbol,
      exchangeName: instrument.exchangeName,
      fullExchangeName: instrument.fullExchangeName,
      instrumentType: instrument.instrumentType,
      firstTradeDate: 1_262_304_000,
      regularMarketTime: Math.floor(marketTime / 1000),
      hasPrePostMarketData: instrument.session === 'us-equity',
      gmtoffset: instrument.session === 'always' ? 0 : -18_000,
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
      dataGranularity: interval,
      range,
      validRanges: Object.keys(RANGES),
    };
    // Recorded answers: daily and longer charts carry no previousClose (only chartPreviousClose, the close
    // before the range); intraday ones carry both.
    if (step >= DAY_MS || this.quirks.omitPreviousClose) delete meta.previousClose;
    if (this.quirks.omitMarketPrice) delete meta.regularMarketPrice;
    if (this.quirks.nullLastBar && bars.timestamp.length > 0) nullBar(bars, bars.timestamp.length - 1);
    const { timestamp, ...quote } = bars;
    return { status: 200, body: { chart: { result: [{ meta, timestamp, indicators: { quote: [quote] } }], error: null } } };
  }
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

/** Bars from the range start to the last trade, open sessions only; the newest closes at the current price. */
function barsFor(instrument: ChartInstrument, from: number, marketTime: number, step: number): Bars | undefined {
  const bars: Bars = { timestamp: [], open: [], high: [], low: [], close: [], volume: [] };
  const intraday = step < DAY_MS;
  const first = intraday ? Math.floor(from / step) * step : sessionOpen(instrument.session, from);
  if ((marketTime - first) / step > MAX_BARS * (intraday ? 3 : 1)) return undefined;
  for (let t = first; t <= marketTime; t += step) {
    if (intraday ? !isOpen(instrument.session, t) : !isTradingDay(instrument.session, t)) continue;
    const bar = barAt(instrument.priceKey, t, Math.min(step, Math.max(MINUTE_MS, marketTime - t)));
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
  if (last >= 0) {
    const price = round(priceAt(instrument.priceKey, marketTime), 2);
    bars.close[last] = price;
    bars.high[last] = Math.max(bars.high[last] ?? price, price);
    bars.low[last] = Math.min(bars.low[last] ?? price, price);
    bars.open[last] ??= price;
    bars.volume[last] ??= 0;
  }
  return bars;
}

function nullBar(bars: Bars, i: number): void {
  bars.open[i] = null;
  bars.high[i] = null;
  bars.low[i] = null;
  bars.close[i] = null;
  bars.volume[i] = null;
}

function notFound(): SimResponse {
  return { status: 404, body: { chart: { result: null, error: { code: 'Not Found', description: 'No data found, symbol may be delisted' } } } };
}

function badInput(description: string): SimResponse {
  return { status: 400, body: { chart: { result: null, error: { code: 'Bad Request', description } } } };
}

function forcedFailure(status: number): SimResponse {
  if (status === 404) return notFound();
  if (status === 429) return { status: 429, body: 'Too Many Requests\r\n' };
  return { status, body: { chart: { result: null, error: { code: 'Internal Server Error', description: 'Internal Server Error' } } } };
}
