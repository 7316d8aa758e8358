// Reading the parameters of the functions the service owns as Alpha Vantage reads them, for /query and the
// REST routes alike: a parameter is one value, read as wire/alpha-vantage/parameter-values.ts reads every
// value (trimmed, invisible characters refused); an enum is matched in any letter case.
import { ApiError } from '../core/errors.js';
import { readMonth } from '../wire/alpha-vantage/indicator-options.js';
import { given } from '../wire/alpha-vantage/parameter-values.js';
import {
  OUTPUT_SIZES,
  type OutputSize,
  SERIES_INTERVALS,
  type SeriesFunction,
  type SeriesInterval,
  type SeriesQuery,
  takesOutputSize,
} from '../wire/alpha-vantage/time-series.js';

type Raw = Record<string, unknown>;

/** The value, or MISSING_PARAMETER naming the function that needs it. */
export function required(value: unknown, name: string, fn: string): string {
  const text = given(value, name);
  if (text === undefined || text === '') throw new ApiError('MISSING_PARAMETER', `${name} is required for ${fn}`);
  return text;
}

/** One of `allowed` in any letter case, or undefined when absent. */
export function readEnum<T extends string>(raw: unknown, name: string, allowed: readonly T[]): T | undefined {
  const value = given(raw, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw new ApiError('INVALID_PARAMETER', `${name} must be one of: ${allowed.join(', ')}`);
  return value as T;
}

function readBoolean(raw: unknown, name: string): boolean | undefined {
  const value = readEnum(raw, name, ['true', 'false'] as const);
  return value === undefined ? undefined : value === 'true';
}

/** A TIME_SERIES_* call: the parameters its function takes, `symbol` already read. */
export function seriesQuery(fn: string, symbol: string, query: Raw): SeriesQuery {
  const series = fn as SeriesFunction;
  const outputsize = takesOutputSize(series) ? readEnum(query.outputsize, 'outputsize', OUTPUT_SIZES) : undefined;
  if (series !== 'TIME_SERIES_INTRADAY') return { fn: series, symbol, outputsize };
  const interval = readEnum(query.interval, 'interval', SERIES_INTERVALS);
  if (interval === undefined)
    throw new ApiError('MISSING_PARAMETER', `interval is required for ${series}: one of ${SERIES_INTERVALS.join(', ')}`);
  return {
    fn: series,
    symbol,
    outputsize: outputsize as OutputSize | undefined,
    interval: interval as SeriesInterval,
    month: readMonth(query.month),
    extendedHours: readBoolean(query.extended_hours, 'extended_hours'),
    adjusted: readBoolean(query.adjusted, 'adjusted'),
  };
}
