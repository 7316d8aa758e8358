// A Yahoo chart read as a bar series the service stores, and a recent chart merged into a stored series.
// Rows are keyed as Alpha Vantage keys them: the bar's start in the exchange's zone (`YYYY-MM-DD`,
// intraday `YYYY-MM-DD HH:MM`); bars with a missing price are skipped (Yahoo leaves nulls for empty or
// forming bars), a later bar with the same key replaces the earlier one (Yahoo's live daily bar can repeat
// the day). Prices are restored to what the exchange printed (exchangePrice): Yahoo sends bar prices as
// float32 numbers (recorded: 282.2799987792969 for 282.28), and indicators computed from those would not
// equal Alpha Vantage's, computed from the printed prices.
import { type ChartResult, finite, isObject, previousCloseOf, type TradingPeriods, tradingPeriodsOf, unexpected } from './parse-chart.js';

/** One symbol's bars of one size, oldest first, in columns (the stored form). */
export interface ChartSeries {
  /** The exchange's IANA zone (meta.exchangeTimezoneName): the keys are in it. */
  zone: string;
  keys: string[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  /** What a quote reads from the newest chart's meta. */
  latest: ChartLatest;
}

/** The newest chart's meta fields a quote needs (parse-chart-quote.ts reads them as it reads a chart's meta). */
interface ChartLatest {
  regularMarketPrice?: number;
  regularMarketTime?: number;
  regularMarketDayHigh?: number;
  regularMarketDayLow?: number;
  regularMarketVolume?: number;
  gmtoffset?: number;
  exchangeTimezoneName: string;
  /** currentTradingPeriod, which says how fresh the price was when the chart came (series stored before it was kept have none). */
  tradingPeriods?: TradingPeriods;
}

export interface ReadChart {
  series: ChartSeries;
  /** The close of the session before the chart's first bar when the chart states it (a one-day daily range). */
  closeBefore: number | undefined;
}

/** `chart` (asked with `range`) as a series; a chart without its exchange's zone is an unreadable answer. */
export function readChartSeries({ meta, result }: ChartResult, range: string, intraday: boolean, symbol: string): ReadChart {
  const zone = typeof meta.exchangeTimezoneName === 'string' ? meta.exchangeTimezoneName : undefined;
  if (zone === undefined || !validZone(zone)) throw unexpected(symbol, 'chart-time-zone', 'a chart without its exchange time zone');
  const series = emptySeries(zone, latestOf(meta, zone));
  const keyOf = zoneFormat(zone, intraday);
  const hint = finite(meta.priceHint);
  const times = Array.isArray(result.timestamp) ? result.timestamp : [];
  const indicators = isObject(result.indicators) ? result.indicators : undefined;
  const quote = Array.isArray(indicators?.quote) && isObject(indicators.quote[0]) ? indicators.quote[0] : {};
  const column = (name: string) => (Array.isArray(quote[name]) ? (quote[name] as unknown[]) : []);
  const [open, high, low, close, volume] = ['open', 'high', 'low', 'close', 'volume'].map(column) as unknown[][];
  times.forEach((time, i) => {
    const t = finite(time);
    const prices = [open?.[i], high?.[i], low?.[i], close?.[i]].map((v) => finite(v));
    if (t === undefined || prices.some((p) => p === undefined)) return;
    const [o, h, l, c] = (prices as number[]).map((p) => exchangePrice(p, hint));
    const key = keyOf(t * 1000);
    const last = series.keys.length - 1;
    if (last >= 0 && series.keys[last] === key) drop(series, last);
    push(series, key, o as number, h as number, l as number, c as number, finite(volume?.[i]) ?? 0);
  });
  // Daily charts carry no previousClose; a one-day range's chartPreviousClose is the previous session's
  // close (UPSTREAMS.md, recorded chart-aapl-1d-1d), so such a chart says what precedes its bar.
  const closeBefore = intraday ? undefined : previousCloseOf(meta, range);
  return { series, closeBefore };
}

export type Merged = { kind: 'merged'; series: ChartSeries } | { kind: 'rebase'; reason: 'gap' | 'changed' };

/**
 * `recent` merged into `stored`: bars it shares replaced by its own, newer ones appended, the latest meta
 * its. Only a series that stays contiguous merges: `recent` must overlap `stored`, or start right after it
 * (a one-day chart whose stated close before is the stored last close: no session missed in between); and
 * a completed bar both hold must have kept its prices, or the history changed (a split adjusts every past
 * price). Otherwise the whole series is to be fetched again ('rebase').
 */
export function mergeSeries(stored: ChartSeries, { series: recent, closeBefore }: ReadChart): Merged {
  const first = recent.keys[0];
  if (first === undefined) return { kind: 'merged', series: { ...stored, latest: recent.latest } };
  const lastStored = stored.keys.length - 1;
  const at = stored.keys.findIndex((key) => key >= first);
  // Compared as float32, the precision Yahoo keeps bar prices in (meta prices come as written).
  if (at === -1 && (closeBefore === undefined || Math.fround(stored.close[lastStored] ?? Number.NaN) !== Math.fround(closeBefore)))
    return { kind: 'rebase', reason: 'gap' };
  const merged = emptySeries(recent.zone, recent.latest);
  const keep = at === -1 ? stored.keys.length : at;
  for (let i = 0; i < keep; i += 1) copy(stored, i, merged);
  let s = keep;
  for (let r = 0; r < recent.keys.length; r += 1) {
    const key = recent.keys[r] as string;
    // Stored bars the recent chart skipped (a null this time) stay.
    for (; s < stored.keys.length && (stored.keys[s] as string) < key; s += 1) copy(stored, s, merged);
    if (s < stored.keys.length && stored.keys[s] === key) {
      // The stored newest bar may have been forming; any other shared bar was complete and must not have moved.
      if (s !== lastStored && (stored.open[s] !== recent.open[r] || stored.close[s] !== recent.close[r]))
        return { kind: 'rebase', reason: 'changed' };
      s += 1;
    }
    copy(recent, r, merged);
  }
  for (; s < stored.keys.length; s += 1) copy(stored, s, merged);
  return { kind: 'merged', series: merged };
}

/** The series without bars dated before `fromDate` (`YYYY-MM-DD`). */
export function trimSeries(series: ChartSeries, fromDate: string): ChartSeries {
  const at = series.keys.findIndex((key) => key >= fromDate);
  if (at <= 0) return at === 0 ? series : { ...series, keys: [], open: [], high: [], low: [], close: [], volume: [] };
  return {
    ...series,
    keys: series.keys.slice(at),
    open: series.open.slice(at),
    high: series.high.slice(at),
    low: series.low.slice(at),
    close: series.close.slice(at),
    volume: series.volume.slice(at),
  };
}

/**
 * The price the exchange printed for a bar price Yahoo sent: Yahoo keeps bar prices as float32, so 282.28
 * arrives as 282.2799987792969, and sometimes one float32 step off (recorded ^TNX: 4.279000282287598,
 * one step above 4.279's own float32). The value at the chart's `priceHint` decimals when Yahoo's number is
 * within one float32 step of it; else (more decimals than the hint, as crypto's) the shortest decimal that
 * float32 stands for; a number that is no float32 at all is taken as sent.
 * @internal
 */
export function exchangePrice(value: number, priceHint: number | undefined): number {
  if (Math.fround(value) !== value || value === 0) return value;
  const step = 2 ** (Math.floor(Math.log2(Math.abs(value))) - 23);
  if (priceHint !== undefined && priceHint >= 0 && priceHint <= 8) {
    const printed = Number(value.toFixed(priceHint));
    if (Math.abs(Math.fround(printed) - value) <= step) return printed;
  }
  for (let digits = 1; digits <= 9; digits += 1) {
    const shortest = Number(value.toPrecision(digits));
    if (Math.fround(shortest) === value) return shortest;
  }
  return value;
}

function latestOf(meta: Record<string, unknown>, zone: string): ChartLatest {
  const latest: ChartLatest = { exchangeTimezoneName: zone };
  for (const name of [
    'regularMarketPrice',
    'regularMarketTime',
    'regularMarketDayHigh',
    'regularMarketDayLow',
    'regularMarketVolume',
    'gmtoffset',
  ] as const) {
    const value = finite(meta[name]);
    if (value !== undefined) latest[name] = value;
  }
  const periods = tradingPeriodsOf(meta);
  if (periods !== undefined) latest.tradingPeriods = periods;
  return latest;
}

function emptySeries(zone: string, latest: ChartLatest): ChartSeries {
  return { zone, keys: [], open: [], high: [], low: [], close: [], volume: [], latest };
}

function push(s: ChartSeries, key: string, open: number, high: number, low: number, close: number, volume: number): void {
  s.keys.push(key);
  s.open.push(open);
  s.high.push(high);
  s.low.push(low);
  s.close.push(close);
  s.volume.push(volume);
}

function copy(from: ChartSeries, i: number, to: ChartSeries): void {
  push(
    to,
    from.keys[i] as string,
    from.open[i] as number,
    from.high[i] as number,
    from.low[i] as number,
    from.close[i] as number,
    from.volume[i] as number,
  );
}

function drop(s: ChartSeries, i: number): void {
  for (const column of [s.keys, s.open, s.high, s.low, s.close, s.volume] as unknown[][]) column.splice(i, 1);
}

/** `YYYY-MM-DD` or `YYYY-MM-DD HH:MM` of an instant in `zone`. */
function zoneFormat(zone: string, withTime: boolean): (ms: number) => string {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(withTime ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : {}),
  });
  return (ms) => {
    const p = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, part.value]));
    const day = `${p.year}-${p.month}-${p.day}`;
    return withTime ? `${day} ${p.hour}:${p.minute}` : day;
  };
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
