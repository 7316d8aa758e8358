// Alpha Vantage's `datatype=csv` answer for a JSON body of the same call: the same values, one row per entry,
// newest first, CRLF line ends. Recorded CSV answers fix the columns of the quote
// (`symbol,open,high,low,price,volume,latestDay,previousClose,change,changePercent`) and of the price series
// (`timestamp,open,high,low,close,volume`); the rest follow the same rule from their JSON keys: the number
// ("1. ", "5. ") dropped and spaces joined by "_" (`adjusted_close`), the indicators' own value names after
// `time`, a lone record (the exchange rate) its fields in one row. The service renders the functions it owns
// with it (from its stored answers), the simulator every one.
import { stringify } from 'csv-stringify/sync';
import { MATCH_FIELDS, QUOTE_FIELDS } from './bodies.js';

type Json = Record<string, unknown>;
type Row = Record<string, unknown>;

const QUOTE_COLUMNS = ['symbol', 'open', 'high', 'low', 'price', 'volume', 'latestDay', 'previousClose', 'change', 'changePercent'];

/** `1. open` -> `open`, `5. adjusted close` -> `adjusted_close`, `9. matchScore` -> `matchScore`. */
function column(key: string): string {
  return key.replace(/^\d+[a-z]?\.\s*/, '').replace(/\s+/g, '_');
}

/** A CSV answer from its header and rows, as Alpha Vantage writes one (quoted where a value needs it, CRLF). */
export function csv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return stringify([header, ...rows], { record_delimiter: 'windows' });
}

/** The CSV rendering of `body`, or undefined for a layout Alpha Vantage answers in JSON only. */
export function csvOf(body: Json): string | undefined {
  const quote = body['Global Quote'];
  if (isObject(quote)) return csv(QUOTE_COLUMNS, Object.keys(quote).length === 0 ? [] : [QUOTE_FIELDS.map((f) => quote[f] ?? '')]);
  if (Array.isArray(body.bestMatches)) {
    const matches = body.bestMatches as Row[];
    return csv(
      MATCH_FIELDS.map(column),
      matches.map((m) => MATCH_FIELDS.map((f) => m[f] ?? '')),
    );
  }
  if (isObject(body['Meta Data'])) return series(body);
  if (Array.isArray(body.data)) return table(body);
  return record(body);
}

/** One flat record under one key (`Realtime Currency Exchange Rate`): its fields as columns, one row. */
function record(body: Json): string | undefined {
  const keys = Object.keys(body);
  const only = keys.length === 1 ? body[keys[0] as string] : undefined;
  if (!isObject(only) || Object.values(only).some((v) => typeof v === 'object' && v !== null)) return undefined;
  return csv(Object.keys(only).map(column), [Object.values(only)]);
}

/** `Meta Data` beside one object of rows keyed by date or time. */
function series(body: Json): string | undefined {
  const name = Object.keys(body).find((key) => key !== 'Meta Data' && isObject(body[key]));
  if (name === undefined) return undefined;
  const rows = Object.entries(body[name] as Record<string, Row>);
  const keys = Object.keys(rows[0]?.[1] ?? {});
  const technical = name.startsWith('Technical Analysis');
  const header = [technical ? 'time' : 'timestamp', ...keys.map((k) => (technical ? k : column(k)))];
  return csv(
    header,
    rows.map(([at, row]) => [at, ...keys.map((k) => row[k] ?? '')]),
  );
}

/** `data`: an array of flat records (dividends, splits, options), or `{date, value}` points (commodities, economy). */
function table(body: Json): string {
  const records = (body.data as unknown[]).filter(isObject);
  const points = records.length > 0 && records.every((r) => Object.keys(r).join() === 'date,value');
  if (points)
    return csv(
      ['timestamp', 'value'],
      records.map((r) => [r.date, r.value]),
    );
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
  return csv(
    keys,
    records.map((r) => keys.map((k) => cell(r[k]))),
  );
}

function cell(value: unknown): unknown {
  return value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : value;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
