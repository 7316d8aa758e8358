// TIME_SERIES_DAILY/WEEKLY/MONTHLY/INTRADAY: `Meta Data` plus one series object keyed by date (or
// date-time for intraday), newest first, rows of five decimal strings. The upstream shape is kept; rows
// that are not five decimals are refused rather than passed on.
import { UnreadableAnswerError } from '../../core/errors.js';
import { parseDecimal } from '../../wire/alpha-vantage/decimal.js';
import { BAR_FIELDS, type SeriesFunction, type SeriesInterval, seriesKey } from '../../wire/alpha-vantage/time-series.js';

type BarRow = Record<(typeof BAR_FIELDS)[number], string>;
export type TimeSeriesBody = { 'Meta Data': Record<string, string> } & Record<string, Record<string, BarRow>>;

const DAY_KEY = /^\d{4}-\d{2}-\d{2}$/;
const INTRADAY_KEY = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/;

/** Takes a body already classified as data. */
export function parseTimeSeries(body: Record<string, unknown>, fn: SeriesFunction, interval?: SeriesInterval): TimeSeriesBody {
  const meta = body['Meta Data'];
  const key = seriesKey(fn, interval);
  const rows = body[key];
  if (!isRecord(meta) || !Object.values(meta).every((v) => typeof v === 'string')) {
    throw new UnreadableAnswerError('series-meta', `Alpha Vantage sent ${fn} without valid "Meta Data"`);
  }
  if (!isRecord(rows)) throw new UnreadableAnswerError('no-series', `Alpha Vantage sent ${fn} without "${key}"`);
  const rowKey = fn === 'TIME_SERIES_INTRADAY' ? INTRADAY_KEY : DAY_KEY;
  const out: Record<string, BarRow> = {};
  for (const [time, row] of Object.entries(rows)) {
    if (!rowKey.test(time) || !isRecord(row)) throw malformed(fn, time);
    out[time] = barRow(row, fn, time);
  }
  return { 'Meta Data': meta as Record<string, string>, [key]: out } as TimeSeriesBody;
}

/** The five fields as sent; a missing or non-numeric one, or a negative volume, refuses the body. */
function barRow(row: Record<string, unknown>, fn: SeriesFunction, time: string): BarRow {
  const out = {} as BarRow;
  for (const field of BAR_FIELDS) {
    const value = row[field];
    const n = parseDecimal(value);
    if (typeof value !== 'string' || n === undefined || n < 0) throw malformed(fn, time);
    out[field] = value;
  }
  return out;
}

function malformed(fn: string, time: string): UnreadableAnswerError {
  return new UnreadableAnswerError('series-row', `Alpha Vantage sent ${fn} with a malformed row (${time.slice(0, 20)})`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
