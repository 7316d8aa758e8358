// Reads a caller's indicator parameters as Alpha Vantage does: a parameter the indicator does not take is
// ignored (and never forwarded), one it takes is validated strictly and gets its default when absent.
// Shared by /technical and /query so both accept exactly the same calls.
import { ApiError } from '../../core/errors.js';
import {
  indicatorParams,
  indicatorSpec,
  INTRADAY_INTERVALS,
  type Interval,
  type ParamKind,
  SERIES_TYPES,
  type SeriesType,
} from './indicators.js';
import { given } from './parameter-values.js';

export interface IndicatorOptions {
  /** Present exactly when the indicator takes one. */
  timePeriod?: number;
  seriesType?: SeriesType;
  /** Every extra parameter the indicator takes, defaults filled in, values in a canonical spelling. */
  extra: Record<string, string>;
  /** `YYYY-MM`: one month of intraday history (intraday intervals only). */
  month?: string;
}

/** TA-Lib's nine moving-average types, 0 (SMA) to 8 (MAMA). */
const MAX_MA_TYPE = 8;
const MAX_PERIOD = 1_000;
const INTEGER = /^\d{1,6}$/;
const DECIMAL = /^-?\d{1,6}(\.\d{1,8})?$/;
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

type Raw = Record<string, unknown>;

export function readIndicatorOptions(fn: string, interval: Interval, raw: Raw): IndicatorOptions {
  const spec = indicatorSpec(fn);
  if (spec === undefined) throw new ApiError('INVALID_PARAMETER', `unknown indicator ${fn}`);
  const options: IndicatorOptions = { extra: {} };
  if (spec.timePeriod !== null) options.timePeriod = readTimePeriod(raw.time_period) ?? spec.timePeriod;
  if (spec.seriesType) options.seriesType = readSeriesType(raw.series_type) ?? 'close';
  for (const param of indicatorParams(fn)) {
    const value = given(raw[param.name], param.name);
    options.extra[param.name] = value === undefined ? (spec.extra?.[param.name] as string) : readValue(param.name, param.kind, value);
  }
  if (INTRADAY_INTERVALS.has(interval)) options.month = readMonth(raw.month);
  return options;
}

/** `YYYY-MM` from 2000-01 on, or undefined when absent. */
export function readMonth(raw: unknown): string | undefined {
  const value = given(raw, 'month');
  if (value === undefined) return undefined;
  const match = MONTH.exec(value);
  if (match === null || Number(match[1]) < 2000) throw invalid('month', 'a month as YYYY-MM, from 2000-01');
  return value;
}

function readTimePeriod(raw: unknown): number | undefined {
  const value = given(raw, 'time_period');
  if (value === undefined) return undefined;
  const n = INTEGER.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 2 && n <= MAX_PERIOD)) throw invalid('time_period', `a whole number from 2 to ${MAX_PERIOD}`);
  return n;
}

function readSeriesType(raw: unknown): SeriesType | undefined {
  const value = given(raw, 'series_type')?.toLowerCase();
  if (value === undefined) return undefined;
  if (!(SERIES_TYPES as readonly string[]).includes(value)) throw invalid('series_type', `one of: ${SERIES_TYPES.join(', ')}`);
  return value as SeriesType;
}

/** The value in one spelling ("012" → "12", "2.50" → "2.5"), so equal calls share a cache entry. */
function readValue(name: string, kind: ParamKind, value: string): string {
  switch (kind) {
    case 'period': {
      const n = INTEGER.test(value) ? Number(value) : Number.NaN;
      if (!(n >= 1 && n <= MAX_PERIOD)) throw invalid(name, `a whole number from 1 to ${MAX_PERIOD}`);
      return String(n);
    }
    case 'matype': {
      const n = INTEGER.test(value) ? Number(value) : Number.NaN;
      if (!(n >= 0 && n <= MAX_MA_TYPE)) throw invalid(name, `a moving-average type from 0 to ${MAX_MA_TYPE}`);
      return String(n);
    }
    case 'real':
    case 'positive': {
      const n = DECIMAL.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(n) || (kind === 'positive' && n <= 0))
        throw invalid(name, kind === 'positive' ? 'a decimal number above 0' : 'a decimal number');
      return String(n);
    }
  }
}

function invalid(name: string, what: string): ApiError {
  return new ApiError('INVALID_PARAMETER', `${name} must be ${what}`);
}
