// Lays out an Alpha Vantage technical-indicator body from computed outputs: `Meta Data` with Alpha
// Vantage's numbered keys, and `Technical Analysis: <section>` rows newest first as 4-decimal strings.
// The simulator (price-model bars) and the Yahoo fallback (chart bars) both answer through it.
import {
  INTRADAY_INTERVALS,
  type IndicatorSpec,
  type Interval,
  indicatorParams,
  indicatorSpec,
  sectionKey,
} from '../wire/alpha-vantage/indicators.js';
import { fixed } from '../wire/alpha-vantage/decimal.js';
import { computeIndicator, type OhlcvBar } from './compute-indicator.js';
import { type IndicatorParams, T3_VOLUME_FACTOR } from './indicator-params.js';

export interface KeyedBar extends OhlcvBar {
  /** The row key Alpha Vantage uses for this bar: `YYYY-MM-DD`, or `YYYY-MM-DD HH:MM` intraday. */
  key: string;
}

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

/** Alpha Vantage's name for the US exchanges' zone. */
const US_EASTERN = 'US/Eastern';

/**
 * Indicators whose `Time Zone` reads the bare zone name ("US/Eastern"): the moving averages. Recorded
 * answers show SMA, EMA and MACD so; the rest of the family is taken to be alike. Every other indicator
 * writes it "US/Eastern Time": recorded BBANDS and STOCH (2020), and outside the corpus OBV (2018) and RSI
 * (2024) as pasted by users; the suffixed spelling is the one a careless client would trip on, so it is
 * the default.
 */
const BARE_ZONE: ReadonlySet<string> = new Set(['SMA', 'EMA', 'WMA', 'DEMA', 'TEMA', 'TRIMA', 'KAMA', 'T3', 'MACD']);

/** `Meta Data`'s time zone for `fn` in `zone` (Alpha Vantage's own zone name). */
function zoneLabel(fn: string, zone: string): string {
  return BARE_ZONE.has(fn) ? zone : `${zone} Time`;
}

/**
 * Bars computed before the first served row, so seeded averages (EMA, Wilder) have settled. Weekly and
 * monthly bars are fewer, so they get a shorter (still ample) run-in.
 */
export function warmup(params: IndicatorParams): number {
  const longest = Math.max(params.timePeriod ?? 0, ...Object.values(params.extra).filter(Number.isInteger));
  const base = params.interval === 'weekly' || params.interval === 'monthly' ? 100 : 200;
  return Math.min(base + 6 * longest, 1_500);
}

export interface BodyOptions {
  /** Rows to serve at most (default: ROWS for the interval). */
  rows?: number;
  /** The zone the row keys are in, by Alpha Vantage's name for it (`US/Eastern`); zoneLabel spells it per indicator. */
  timeZone?: string;
}

/** The body for `fn` over `bars` (oldest first); rows stop where the indicator is not yet defined. */
export function technicalBody(
  fn: string,
  symbol: string,
  bars: readonly KeyedBar[],
  params: IndicatorParams,
  options: BodyOptions = {},
): Record<string, unknown> {
  const spec = indicatorSpec(fn) as IndicatorSpec;
  const rows = options.rows ?? ROWS[params.interval];
  const outputs = computeIndicator(fn, bars, params);
  const section: Record<string, Record<string, string>> = {};
  let newest: KeyedBar | undefined;
  for (let i = bars.length - 1, served = 0; i >= 0 && served < rows; i -= 1) {
    const values = spec.valueKeys.map((key) => outputs[key]?.[i] ?? Number.NaN);
    if (!values.every(Number.isFinite)) break;
    const bar = bars[i] as KeyedBar;
    newest ??= bar;
    section[bar.key] = Object.fromEntries(spec.valueKeys.map((key, k) => [key, fixed(values[k] as number, 4)]));
    served += 1;
  }
  const lastKey = newest?.key ?? bars[bars.length - 1]?.key ?? '';
  // Recorded intraday SMA: "3: Last Refreshed" carries seconds ("2017-12-20 14:00:00"), its row keys do not.
  const lastRefreshed = INTRADAY_INTERVALS.has(params.interval) ? `${lastKey}:00` : lastKey;
  return {
    'Meta Data': metaData(fn, spec, symbol, lastRefreshed, params, zoneLabel(fn, options.timeZone ?? US_EASTERN)),
    [sectionKey(fn)]: section,
  };
}

/**
 * Keys follow Alpha Vantage's layout: `5: Time Period` when the indicator takes one, then its extra
 * parameters as one numbered group (`5.1`, `5.2`… or a single `6: …`), then the series type, then the
 * time zone, each group taking the next number (recorded: MACD 5.1-5.3 then 6: Series Type, 7: Time Zone;
 * BBANDS 5: Time Period, 6.1-6.3, 7: Series Type, 8: Time Zone; STOCH 5.1-5.5 then 6: Time Zone).
 */
function metaData(
  fn: string,
  spec: IndicatorSpec,
  symbol: string,
  lastRefreshed: string,
  params: IndicatorParams,
  timeZone: string,
): Record<string, string | number> {
  const meta: Record<string, string | number> = {
    '1: Symbol': symbol,
    '2: Indicator': spec.title,
    '3: Last Refreshed': lastRefreshed,
    '4: Interval': params.interval,
  };
  let n = 5;
  if (params.timePeriod !== null) meta[`${n++}: Time Period`] = params.timePeriod;
  const extras: Array<[string, number]> = indicatorParams(fn).map((p) => [p.label, params.extra[p.name] as number]);
  if (fn === 'T3') extras.push(['Volume Factor (vFactor)', T3_VOLUME_FACTOR]);
  if (extras.length === 1) meta[`${n++}: ${extras[0]?.[0]}`] = extras[0]?.[1] as number;
  if (extras.length > 1) {
    extras.forEach(([label, value], k) => {
      meta[`${n}.${k + 1}: ${label}`] = value;
    });
    n += 1;
  }
  if (params.seriesType !== null) meta[`${n++}: Series Type`] = params.seriesType;
  meta[`${n}: Time Zone`] = timeZone;
  return meta;
}
