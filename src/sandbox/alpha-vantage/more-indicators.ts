// The indicators Alpha Vantage documents that the service does not compute itself (MACDEXT, STOCHF, STOCHRSI,
// APO, PPO, MAMA, VWAP), computed on the simulator's bars with the shared maths. Layout as recorded for MACDEXT
// (GOOGL monthly, 2020) and VWAP (IBM 15min, 2020): `Meta Data` numbered like every indicator's, the
// parameters as one numbered group, rows newest first with 4-decimal values.
import { type Interval, INTERVALS, INTRADAY_INTERVALS, SERIES_TYPES, type SeriesType } from '../../wire/alpha-vantage/indicators.js';
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { MA_TYPES, type Series, mama, movingAverage, rsi, stoch } from '../../indicators/indicator-math.js';
import { findInstrument } from '../universe.js';
import { barHistory, type KeyedBar } from './bar-history.js';
import { formatDecimal } from './format.js';

interface Definition {
  title: string;
  /** Parameter, its Meta Data label, default, and whether it is a moving-average type. */
  params: Array<[string, string, number, boolean?]>;
  seriesType: boolean;
  timePeriod: boolean;
  compute: (x: Series, bars: readonly KeyedBar[], p: Record<string, number>) => Record<string, Series>;
}

const MA = (t: number, x: Series, n: number) => movingAverage(t, x, n);

const DEFINITIONS: Record<string, Definition> = {
  MACDEXT: {
    title: 'MACD with Controllable MA Type (MACDEXT)',
    params: [
      ['fastperiod', 'Fast Period', 12],
      ['slowperiod', 'Slow Period', 26],
      ['signalperiod', 'Signal Period', 9],
      ['fastmatype', 'Fast MA Type', 0, true],
      ['slowmatype', 'Slow MA Type', 0, true],
      ['signalmatype', 'Signal MA Type', 0, true],
    ],
    seriesType: true,
    timePeriod: false,
    compute: (x, _bars, p) => {
      const fast = MA(p.fastmatype as number, x, p.fastperiod as number);
      const macd = MA(p.slowmatype as number, x, p.slowperiod as number).map((slow, i) => (fast[i] as number) - slow);
      const signal = MA(p.signalmatype as number, macd, p.signalperiod as number);
      return { MACD: macd, MACD_Signal: signal, MACD_Hist: macd.map((m, i) => m - (signal[i] as number)) };
    },
  },
  STOCHF: {
    title: 'Stochastic Fast (STOCHF)',
    params: [
      ['fastkperiod', 'FastK Period', 5],
      ['fastdperiod', 'FastD Period', 3],
      ['fastdmatype', 'FastD MA Type', 0, true],
    ],
    seriesType: false,
    timePeriod: false,
    compute: (_x, bars, p) =>
      fastStoch(
        bars.map((b) => b.high),
        bars.map((b) => b.low),
        bars.map((b) => b.close),
        p,
      ),
  },
  STOCHRSI: {
    title: 'Stochastic Relative Strength Index',
    params: [
      ['fastkperiod', 'FastK Period', 5],
      ['fastdperiod', 'FastD Period', 3],
      ['fastdmatype', 'FastD MA Type', 0, true],
    ],
    seriesType: true,
    timePeriod: true,
    compute: (x, _bars, p) => {
      const r = rsi(x, p.time_period as number);
      return fastStoch(r, r, r, p);
    },
  },
  APO: oscillator('Absolute Price Oscillator (APO)', (fast, slow) => fast - slow),
  PPO: oscillator('Percentage Price Oscillator (PPO)', (fast, slow) => (100 * (fast - slow)) / slow),
  MAMA: {
    title: 'MESA Adaptive Moving Average',
    params: [
      ['fastlimit', 'Fast Limit', 0.01],
      ['slowlimit', 'Slow Limit', 0.01],
    ],
    seriesType: true,
    timePeriod: false,
    compute: (x, _bars, p) => {
      const { mama: m, fama } = mama(x, p.fastlimit, p.slowlimit);
      return { FAMA: fama, MAMA: m };
    },
  },
  VWAP: {
    title: 'Volume Weighted Average Price (VWAP)',
    params: [],
    seriesType: false,
    timePeriod: false,
    compute: (_x, bars) => {
      let day = '';
      let value = 0;
      let volume = 0;
      return {
        VWAP: bars.map((b) => {
          // VWAP starts over every session.
          if (b.key.slice(0, 10) !== day) [day, value, volume] = [b.key.slice(0, 10), 0, 0];
          value += ((b.high + b.low + b.close) / 3) * b.volume;
          volume += b.volume;
          return volume > 0 ? value / volume : Number.NaN;
        }),
      };
    },
  },
};

function oscillator(title: string, f: (fast: number, slow: number) => number): Definition {
  return {
    title,
    params: [
      ['fastperiod', 'Fast Period', 12],
      ['slowperiod', 'Slow Period', 26],
      ['matype', 'MA Type', 0, true],
    ],
    seriesType: true,
    timePeriod: false,
    compute: (x, _bars, p) => {
      const fast = MA(p.matype as number, x, p.fastperiod as number);
      const slow = MA(p.matype as number, x, p.slowperiod as number);
      return { [title.match(/\((\w+)\)$/)?.[1] as string]: fast.map((v, i) => f(v, slow[i] as number)) };
    },
  };
}

function fastStoch(high: Series, low: Series, close: Series, p: Record<string, number>): Record<string, Series> {
  const { slowK, slowD } = stoch(high, low, close, p.fastkperiod as number, 1, 0, p.fastdperiod as number, p.fastdmatype as number);
  return { FastK: slowK, FastD: slowD };
}

export const MORE_INDICATORS: readonly string[] = Object.keys(DEFINITIONS);

export function moreIndicatorBody(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const def = DEFINITIONS[fn];
  const instrument = findInstrument(query.get('symbol') ?? '');
  const interval = query.get('interval') as Interval;
  const seriesType = query.get('series_type') as SeriesType;
  const period = Number(query.get('time_period'));
  const intradayOnly = fn === 'VWAP';
  if (
    def === undefined ||
    instrument === undefined ||
    !(intradayOnly ? INTRADAY_INTERVALS.has(interval) : INTERVALS.includes(interval)) ||
    (def.seriesType && !SERIES_TYPES.includes(seriesType)) ||
    (def.timePeriod && !(Number.isInteger(period) && period > 1))
  )
    return invalidApiCall(fn);
  const p: Record<string, number> = { time_period: period };
  for (const [name, , fallback, maType] of def.params) {
    const value = Number(query.get(name) ?? fallback);
    if (!Number.isFinite(value) || (maType === true && !(Number.isInteger(value) && value >= 0 && value < MA_TYPES.length)))
      return invalidApiCall(fn);
    p[name] = value;
  }
  const bars = barHistory(instrument.symbol, interval, nowMs, 300);
  const x = bars.map((b) => (def.seriesType ? b[seriesType] : b.close));
  const outputs = def.compute(x, bars, p);
  const keys = Object.keys(outputs);
  const rows: Record<string, Record<string, string>> = {};
  for (let i = bars.length - 1; i >= 0 && Object.keys(rows).length < 100; i -= 1) {
    const values = keys.map((k) => outputs[k]?.[i] ?? Number.NaN);
    if (!values.every(Number.isFinite)) break;
    rows[(bars[i] as KeyedBar).key] = Object.fromEntries(keys.map((k, j) => [k, formatDecimal(values[j] as number, 4)]));
  }
  const newest = Object.keys(rows)[0] ?? '';
  const meta: Record<string, string | number> = {
    '1: Symbol': instrument.symbol,
    '2: Indicator': def.title,
    '3: Last Refreshed': INTRADAY_INTERVALS.has(interval) ? `${newest}:00` : newest,
    '4: Interval': interval,
  };
  let n = 5;
  if (def.timePeriod) meta[`${n++}: Time Period`] = period;
  def.params.forEach(([name, label], k) => {
    meta[`${n}.${k + 1}: ${label}`] = p[name] as number;
  });
  if (def.params.length > 0) n += 1;
  if (def.seriesType) meta[`${n++}: Series Type`] = seriesType;
  meta[`${n}: Time Zone`] = fn === 'VWAP' ? 'US/Eastern' : 'US/Eastern Time';
  return { 'Meta Data': meta, [`Technical Analysis: ${fn}`]: rows };
}
