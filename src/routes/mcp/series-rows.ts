// The rows of a price or indicator series as the tools send them: keyed by date or date-time in Alpha Vantage's
// bodies, here a list newest first, each row's values as numbers.
import { numberOf } from './schemas.js';

/** Rows of a series keyed by date or date-time, newest first, values as numbers. */
export function rowsOf(series: Record<string, Record<string, string>> | undefined, rename: (key: string) => string = (key) => key) {
  return Object.entries(series ?? {})
    .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
    .map(([time, values]) => ({
      time,
      ...Object.fromEntries(Object.entries(values).map(([key, value]) => [rename(key), numberOf(value)])),
    }));
}

/** The dates a list of rows spans, oldest to newest. */
export const span = (rows: readonly { time: string }[]) => (rows.length === 0 ? 'none' : `${rows.at(-1)?.time} to ${rows[0]?.time}`);
