// Alpha Vantage's price series: which functions exist, the parameters each takes, and the key holding
// the rows. The route, the adapter, the parser and the simulator all read this one table.

export const SERIES_FUNCTIONS = ['TIME_SERIES_DAILY', 'TIME_SERIES_WEEKLY', 'TIME_SERIES_MONTHLY', 'TIME_SERIES_INTRADAY'] as const;
export type SeriesFunction = (typeof SERIES_FUNCTIONS)[number];

export const SERIES_INTERVALS = ['1min', '5min', '15min', '30min', '60min'] as const;
export type SeriesInterval = (typeof SERIES_INTERVALS)[number];

export const OUTPUT_SIZES = ['compact', 'full'] as const;
export type OutputSize = (typeof OUTPUT_SIZES)[number];

export interface SeriesQuery {
  fn: SeriesFunction;
  symbol: string;
  /** Daily and intraday only: weekly and monthly always hold the whole history. */
  outputsize?: OutputSize;
  /** Intraday only (required there). */
  interval?: SeriesInterval;
  /** Intraday only: `YYYY-MM`. */
  month?: string;
  /** Intraday only: false for the regular session alone (Alpha Vantage's default is true). */
  extendedHours?: boolean;
  /** Intraday only: false for prices not adjusted for splits and dividends (default true). */
  adjusted?: boolean;
}

export function isSeriesFunction(fn: string): fn is SeriesFunction {
  return (SERIES_FUNCTIONS as readonly string[]).includes(fn);
}

/** Whether `fn` takes `outputsize` (Alpha Vantage documents it for daily and intraday only). */
export function takesOutputSize(fn: SeriesFunction): boolean {
  return fn === 'TIME_SERIES_DAILY' || fn === 'TIME_SERIES_INTRADAY';
}

/** The response key holding the rows, e.g. `Time Series (Daily)` or `Time Series (5min)`. */
export function seriesKey(fn: SeriesFunction, interval?: SeriesInterval): string {
  switch (fn) {
    case 'TIME_SERIES_DAILY':
      return 'Time Series (Daily)';
    case 'TIME_SERIES_WEEKLY':
      return 'Weekly Time Series';
    case 'TIME_SERIES_MONTHLY':
      return 'Monthly Time Series';
    case 'TIME_SERIES_INTRADAY':
      return `Time Series (${interval ?? '5min'})`;
  }
}

/** The five value keys of every row. */
export const BAR_FIELDS = ['1. open', '2. high', '3. low', '4. close', '5. volume'] as const;
