// Builds an Alpha Vantage technical-indicator body from the price model: reads and validates the
// request's parameters as the real API requires them, computes the indicator on a bar history, and lays
// out `Meta Data` and `Technical Analysis: <section>` as Alpha Vantage does.
import {
  INTERVALS,
  INTRADAY_INTERVALS,
  type IndicatorSpec,
  type Interval,
  SERIES_TYPES,
  type SeriesType,
  indicatorSpec,
  sectionKey,
} from '../../upstreams/alpha-vantage/indicators.js';
import { barHistory, type KeyedBar } from './bar-history.js';
import * as m from './indicator-math.js';
import { formatDecimal } from './format.js';

/** Rows served per interval: enough history to chart, small enough to stay quick. */
export const ROWS: Record<Interval, number> = {
  '1min': 100,
  '5min': 100,
  '15min': 100,
  '30min': 100,
  '60min': 100,
  daily: 250,
  weekly: 104,
  monthly: 60,
};

const TIME_ZONE = 'US/Eastern';
/** Tillson's volume factor; Alpha Vantage reports it but takes no parameter for it. */
const T3_VOLUME_FACTOR = 0.7;

type ParamKind = 'period' | 'matype' | 'real' | 'positive';

interface ExtraParam {
  name: string;
  /** The label in `Meta Data`. */
  label: string;
  kind: ParamKind;
}

const EXTRA_PARAMS: Record<string, readonly ExtraParam[]> = {
  MACD: [
    { name: 'fastperiod', label: 'Fast Period', kind: 'period' },
    { name: 'slowperiod', label: 'Slow Period', kind: 'period' },
    { name: 'signalperiod', label: 'Signal Period', kind: 'period' },
  ],
  BBANDS: [
    { name: 'nbdevup', label: 'Deviation multiplier for upper band', kind: 'real' },
    { name: 'nbdevdn', label: 'Deviation multiplier for lower band', kind: 'real' },
    { name: 'matype', label: 'MA Type', kind: 'matype' },
  ],
  STOCH: [
    { name: 'fastkperiod', label: 'FastK Period', kind: 'period' },
    { name: 'slowkperiod', label: 'SlowK Period', kind: 'period' },
    { name: 'slowkmatype', label: 'SlowK MA Type', kind: 'matype' },
    { name: 'slowdperiod', label: 'SlowD Period', kind: 'period' },
    { name: 'slowdmatype', label: 'SlowD MA Type', kind: 'matype' },
  ],
  ADOSC: [
    { name: 'fastperiod', label: 'FastK Period', kind: 'period' },
    { name: 'slowperiod', label: 'SlowK Period', kind: 'period' },
  ],
  ULTOSC: [
    { name: 'timeperiod1', label: 'Time Period 1', kind: 'period' },
    { name: 'timeperiod2', label: 'Time Period 2', kind: 'period' },
    { name: 'timeperiod3', label: 'Time Period 3', kind: 'period' },
  ],
  SAR: [
    { name: 'acceleration', label: 'Acceleration', kind: 'positive' },
    { name: 'maximum', label: 'Maximum', kind: 'positive' },
  ],
};

const MAX_PERIOD = 100_000;

export interface IndicatorParams {
  interval: Interval;
  timePeriod: number | null;
  seriesType: SeriesType | null;
  extra: Record<string, number>;
}

/** The parameters of an indicator call, or null when the real API would answer `Invalid API call`. */
export function readIndicatorParams(fn: string, query: URLSearchParams): IndicatorParams | null {
  const spec = indicatorSpec(fn);
  if (spec === undefined) return null;
  const interval = query.get('interval');
  if (interval === null || !(INTERVALS as readonly string[]).includes(interval)) return null;
  let timePeriod: number | null = null;
  if (spec.timePeriod !== null) {
    timePeriod = parseParam(query.get('time_period'), 'period');
    if (timePeriod === null) return null;
  }
  let seriesType: SeriesType | null = null;
  if (spec.seriesType) {
    const raw = query.get('series_type');
    if (raw === null || !(SERIES_TYPES as readonly string[]).includes(raw)) return null;
    seriesType = raw as SeriesType;
  }
  const extra: Record<string, number> = {};
  for (const param of EXTRA_PARAMS[fn] ?? []) {
    const raw = query.get(param.name) ?? spec.extra?.[param.name] ?? null;
    const value = parseParam(raw, param.kind);
    if (value === null) return null;
    extra[param.name] = value;
  }
  return { interval: interval as Interval, timePeriod, seriesType, extra };
}

function parseParam(raw: string | null, kind: ParamKind): number | null {
  if (raw === null || raw.trim() === '') return null;
  const value = Number(raw);
  if (!Number.isFinite(value)) return null;
  switch (kind) {
    case 'period':
      return Number.isInteger(value) && value >= 1 && value <= MAX_PERIOD ? value : null;
    case 'matype':
      return Number.isInteger(value) && value >= 0 && value < m.MA_TYPES.length ? value : null;
    case 'positive':
      return value > 0 ? value : null;
    case 'real':
      return value;
  }
}

/** The full response body for a valid call; `nowMs` fixes the newest bar. */
export function technicalIndicatorBody(fn: string, symbol: string, params: IndicatorParams, nowMs: number): Record<string, unknown> {
  const spec = indicatorSpec(fn) as IndicatorSpec;
  const rows = ROWS[params.interval];
  const bars = barHistory(symbol, params.interval, nowMs, rows + warmup(params));
  const outputs = computeIndicator(fn, bars, params);
  const section: Record<string, Record<string, string>> = {};
  let newest: KeyedBar | undefined;
  for (let i = bars.length - 1, served = 0; i >= 0 && served < rows; i -= 1) {
    const values = spec.valueKeys.map((key) => outputs[key]?.[i] ?? Number.NaN);
    if (!values.every(Number.isFinite)) break;
    const bar = bars[i] as KeyedBar;
    newest ??= bar;
    section[bar.key] = Object.fromEntries(spec.valueKeys.map((key, k) => [key, formatDecimal(values[k] as number, 4)]));
    served += 1;
  }
  const lastKey = newest?.key ?? (bars[bars.length - 1] as KeyedBar).key;
  const lastRefreshed = INTRADAY_INTERVALS.has(params.interval) ? `${lastKey}:00` : lastKey;
  return { 'Meta Data': metaData(fn, spec, symbol, lastRefreshed, params), [sectionKey(fn)]: section };
}

/**
 * Bars computed before the first served row, so seeded averages have settled. Weekly and monthly bars
 * are built from every trading day they hold, so they get a shorter (still ample) run-in.
 */
function warmup(params: IndicatorParams): number {
  const longest = Math.max(params.timePeriod ?? 0, ...Object.values(params.extra).filter(Number.isInteger));
  const base = params.interval === 'weekly' || params.interval === 'monthly' ? 100 : 200;
  return Math.min(base + 6 * longest, 1_500);
}

/**
 * Keys follow Alpha Vantage's layout: `5: Time Period` when the indicator takes one, then its extra
 * parameters as one numbered group (`5.1`, `5.2`… or a single `6: …`), then the series type, then the
 * time zone, each group taking the next number.
 */
function metaData(fn: string, spec: IndicatorSpec, symbol: string, lastRefreshed: string, params: IndicatorParams): Record<string, string | number> {
  const meta: Record<string, string | number> = {
    '1: Symbol': symbol,
    '2: Indicator': spec.title,
    '3: Last Refreshed': lastRefreshed,
    '4: Interval': params.interval,
  };
  let n = 5;
  if (params.timePeriod !== null) meta[`${n++}: Time Period`] = params.timePeriod;
  const extras: Array<[string, number]> = (EXTRA_PARAMS[fn] ?? []).map((p) => [p.label, params.extra[p.name] as number]);
  if (fn === 'T3') extras.push(['Volume Factor (vFactor)', T3_VOLUME_FACTOR]);
  if (extras.length === 1) meta[`${n++}: ${extras[0]?.[0]}`] = extras[0]?.[1] as number;
  if (extras.length > 1) {
    extras.forEach(([label, value], k) => {
      meta[`${n}.${k + 1}: ${label}`] = value;
    });
    n += 1;
  }
  if (params.seriesType !== null) meta[`${n++}: Series Type`] = params.seriesType;
  meta[`${n}: Time Zone`] = TIME_ZONE;
  return meta;
}

/** Every output of `fn` over the bars, keyed by the row value keys Alpha Vantage uses. */
export function computeIndicator(fn: string, bars: readonly KeyedBar[], params: IndicatorParams): Record<string, m.Series> {
  const open = bars.map((b) => b.open);
  const high = bars.map((b) => b.high);
  const low = bars.map((b) => b.low);
  const close = bars.map((b) => b.close);
  const volume = bars.map((b) => b.volume);
  const price = { open, high, low, close }[params.seriesType ?? 'close'];
  const n = params.timePeriod ?? 0;
  const x = params.extra;
  const p = (name: string) => x[name] as number;
  switch (fn) {
    case 'SMA':
      return { SMA: m.sma(price, n) };
    case 'EMA':
      return { EMA: m.ema(price, n) };
    case 'WMA':
      return { WMA: m.wma(price, n) };
    case 'DEMA':
      return { DEMA: m.dema(price, n) };
    case 'TEMA':
      return { TEMA: m.tema(price, n) };
    case 'TRIMA':
      return { TRIMA: m.trima(price, n) };
    case 'KAMA':
      return { KAMA: m.kama(price, n) };
    case 'T3':
      return { T3: m.t3(price, n, T3_VOLUME_FACTOR) };
    case 'RSI':
      return { RSI: m.rsi(price, n) };
    case 'MOM':
      return { MOM: m.mom(price, n) };
    case 'CMO':
      return { CMO: m.cmo(price, n) };
    case 'ROC':
      return { ROC: m.roc(price, n) };
    case 'ROCR':
      return { ROCR: m.rocr(price, n) };
    case 'TRIX':
      return { TRIX: m.trix(price, n) };
    case 'MIDPOINT':
      return { MIDPOINT: m.midpoint(price, n) };
    case 'MACD': {
      const r = m.macd(price, p('fastperiod'), p('slowperiod'), p('signalperiod'));
      return { MACD: r.macd, MACD_Signal: r.signal, MACD_Hist: r.hist };
    }
    case 'BBANDS': {
      const r = m.bbands(price, n, p('nbdevup'), p('nbdevdn'), p('matype'));
      return { 'Real Upper Band': r.upper, 'Real Middle Band': r.middle, 'Real Lower Band': r.lower };
    }
    case 'HT_TRENDLINE':
      return { HT_TRENDLINE: m.htTrendline(price) };
    case 'HT_SINE': {
      const r = m.htSine(price);
      return { SINE: r.sine, 'LEAD SINE': r.leadSine };
    }
    case 'HT_TRENDMODE':
      return { TRENDMODE: m.htTrendMode(price) };
    case 'HT_DCPERIOD':
      return { DCPERIOD: m.htDcPeriod(price) };
    case 'HT_DCPHASE':
      return { HT_DCPHASE: m.htDcPhase(price) };
    case 'HT_PHASOR': {
      const r = m.htPhasor(price);
      return { PHASE: r.phase, QUADRATURE: r.quadrature };
    }
    case 'ADX':
      return { ADX: m.adx(high, low, close, n) };
    case 'ADXR':
      return { ADXR: m.adxr(high, low, close, n) };
    case 'CCI':
      return { CCI: m.cci(high, low, close, n) };
    case 'ATR':
      return { ATR: m.atr(high, low, close, n) };
    case 'NATR':
      return { NATR: m.natr(high, low, close, n) };
    case 'STOCH': {
      const r = m.stoch(high, low, close, p('fastkperiod'), p('slowkperiod'), p('slowkmatype'), p('slowdperiod'), p('slowdmatype'));
      return { SlowK: r.slowK, SlowD: r.slowD };
    }
    case 'WILLR':
      return { WILLR: m.willr(high, low, close, n) };
    case 'AROON': {
      const r = m.aroon(high, low, n);
      return { 'Aroon Up': r.up, 'Aroon Down': r.down };
    }
    case 'AROONOSC':
      return { AROONOSC: m.aroonOsc(high, low, n) };
    case 'MFI':
      return { MFI: m.mfi(high, low, close, volume, n) };
    case 'DX':
      return { DX: m.dx(high, low, close, n) };
    case 'MINUS_DI':
      return { MINUS_DI: m.minusDi(high, low, close, n) };
    case 'PLUS_DI':
      return { PLUS_DI: m.plusDi(high, low, close, n) };
    case 'MINUS_DM':
      return { MINUS_DM: m.minusDm(high, low, n) };
    case 'PLUS_DM':
      return { PLUS_DM: m.plusDm(high, low, n) };
    case 'MIDPRICE':
      return { MIDPRICE: m.midprice(high, low, n) };
    case 'TRANGE':
      return { TRANGE: m.trange(high, low, close) };
    case 'BOP':
      return { BOP: m.bop(open, high, low, close) };
    case 'AD':
      return { 'Chaikin A/D': m.ad(high, low, close, volume) };
    case 'ADOSC':
      return { ADOSC: m.adosc(high, low, close, volume, p('fastperiod'), p('slowperiod')) };
    case 'OBV':
      return { OBV: m.obv(close, volume) };
    case 'ULTOSC':
      return { ULTOSC: m.ultosc(high, low, close, p('timeperiod1'), p('timeperiod2'), p('timeperiod3')) };
    case 'SAR':
      return { SAR: m.sar(high, low, p('acceleration'), p('maximum')) };
    default:
      throw new Error(`no computation for indicator ${fn}`);
  }
}
