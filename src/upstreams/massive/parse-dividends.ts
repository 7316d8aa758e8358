// Massive (formerly Polygon.io) /v3/reference/dividends: every answer is classified here, from the status
// and the body, without I/O, so each recorded body can be tested. Messages name the cause, never the key,
// the upstream address or its next_url. An answer that does not read as the wire format says throws
// UnreadableAnswerError with a stable reason, so a change of format is counted per reason.
import { ApiError, UnreadableAnswerError } from '../../core/errors.js';
import { retryAfterMs } from '../retry-after.js';

export interface DividendRecord {
  id?: string;
  ticker: string;
  cash_amount: number;
  currency?: string;
  declaration_date?: string;
  ex_dividend_date: string;
  pay_date?: string;
  record_date?: string;
  frequency?: number;
  dividend_type?: string;
}

export interface DividendsPage {
  results: DividendRecord[];
  /** The upstream's own cursor for the following page (from `next_url`), or null on the last page. */
  nextCursor: string | null;
}

export interface MassiveResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or undefined when it was not JSON. */
  json: unknown;
}

export type ClassifiedDividends =
  | { kind: 'data'; page: DividendsPage }
  | { kind: 'refusal'; message: string; retryAfterMs: number }
  | { kind: 'error'; error: ApiError };

export interface ParseOptions {
  /** The ticker the call filtered on: every record must carry it. */
  ticker?: string;
  /** The call read a page by cursor: a 400 then means the caller's cursor is bad or expired. */
  cursor?: boolean;
  now?: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const OPTIONAL_DATES = ['declaration_date', 'pay_date', 'record_date'] as const;
/** Upstream cursors are base64 or base64url text; anything else is not passed on. */
export const UPSTREAM_CURSOR = /^[A-Za-z0-9+/=_.~-]{1,1024}$/;
const DEFAULT_BACKOFF_MS = 60_000;

export function classifyDividendsResponse(res: MassiveResponse, options: ParseOptions = {}): ClassifiedDividends {
  if (res.status === 429) {
    return {
      kind: 'refusal',
      message: 'Massive refused the call: request limit of the plan reached',
      retryAfterMs: retryAfterMs(res.headers['retry-after'], DEFAULT_BACKOFF_MS, options.now),
    };
  }
  // Key and plan problems are told by the body, whatever the status: a missing key came back as a 400
  // (recorded, polygon-io/issues#219), where the documentation says 401.
  const problem = res.status === 200 ? undefined : accountProblem(res.json);
  if (problem !== undefined) return error(problem);
  if (res.status === 401) return error(unauthorisedMessage(res.json));
  if (res.status === 403) return error(NOT_ENTITLED);
  if (res.status === 404) return error('Massive answered 404 for the dividends endpoint; check MASSIVE_URL');
  if (res.status === 400 && options.cursor) {
    return {
      kind: 'error',
      error: new ApiError('INVALID_PARAMETER', 'cursor is not valid or has expired: start again from the first page'),
    };
  }
  if (res.status !== 200) return error(`Massive answered HTTP ${res.status}`);
  try {
    return { kind: 'data', page: parseDividendsBody(res.json, options.ticker) };
  } catch (e) {
    return { kind: 'error', error: e as ApiError };
  }
}

/**
 * A 200 body: `{ results, status, request_id, next_url? }`; `id` and `currency` of a record may be absent
 * (recorded pages of 2022 carry neither), and a full page may come without next_url. Throws
 * UnreadableAnswerError for anything else.
 */
function parseDividendsBody(json: unknown, ticker?: string): DividendsPage {
  if (json === undefined) throw unexpected('not-json', 'a body that is not JSON');
  if (!isObject(json)) throw unexpected('dividends-body', 'a body that is not a JSON object');
  const status = json.status;
  if (typeof status === 'string' && !['OK', 'DELAYED'].includes(status.toUpperCase())) {
    throw unexpected('dividends-status', `status ${JSON.stringify(status.slice(0, 40))}`);
  }
  const raw = json.results ?? [];
  if (!Array.isArray(raw)) throw unexpected('dividends-results', '"results" that is not a list');
  const results = raw.map((item, i) => parseRecord(item, i));
  if (ticker !== undefined) {
    const other = results.find((r) => r.ticker !== ticker);
    if (other !== undefined) throw unexpected('dividend-ticker', `dividends of ${other.ticker.slice(0, 20)} when asked for ${ticker}`);
  }
  return { results, nextCursor: cursorOf(json.next_url) };
}

function parseRecord(item: unknown, index: number): DividendRecord {
  if (!isObject(item)) throw badRecord(index, 'is not an object');
  const ticker = item.ticker;
  if (typeof ticker !== 'string' || ticker.trim() === '') throw badRecord(index, 'has no ticker');
  const cash = toNumber(item.cash_amount);
  if (cash === undefined || cash < 0) throw badRecord(index, 'has no valid cash_amount');
  const exDate = item.ex_dividend_date;
  if (typeof exDate !== 'string' || !DATE.test(exDate)) throw badRecord(index, 'has no valid ex_dividend_date');

  const record: DividendRecord = { ticker: ticker.trim(), cash_amount: cash, ex_dividend_date: exDate };
  if (typeof item.id === 'string') record.id = item.id;
  if (typeof item.currency === 'string' && item.currency !== '') record.currency = item.currency.toUpperCase();
  for (const field of OPTIONAL_DATES) {
    const value = item[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string' || !DATE.test(value)) throw badRecord(index, `has a malformed ${field}`);
    record[field] = value;
  }
  if (item.frequency !== undefined && item.frequency !== null) {
    const frequency = toNumber(item.frequency);
    if (frequency === undefined || !Number.isInteger(frequency) || frequency < 0) throw badRecord(index, 'has a malformed frequency');
    record.frequency = frequency;
  }
  if (typeof item.dividend_type === 'string' && item.dividend_type !== '') record.dividend_type = item.dividend_type;
  return record;
}

/** The `cursor` value of `next_url`, read from the raw query so a `+` in base64 stays a `+`. @internal */
export function cursorOf(nextUrl: unknown): string | null {
  if (nextUrl === undefined || nextUrl === null || nextUrl === '') return null;
  if (typeof nextUrl !== 'string') throw unexpected('next-url', 'a next_url that is not text');
  const query = nextUrl.includes('?') ? nextUrl.slice(nextUrl.indexOf('?') + 1) : '';
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq) !== 'cursor') continue;
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      break;
    }
    if (UPSTREAM_CURSOR.test(value)) return value;
    break;
  }
  throw unexpected('next-url', 'a next_url without a usable cursor');
}

/**
 * An answer saying no key arrived at all (as opposed to a wrong key): the key was sent in a way this server
 * ignores. Told by the body, whatever the status (recorded as a 400; documented as a 401).
 */
export function saysKeyNotProvided(res: MassiveResponse): boolean {
  return res.status !== 200 && isErrorBody(res.json) && KEY_NOT_PROVIDED.test(errorText(res.json));
}

const KEY_NOT_PROVIDED = /not provided|missing/i;
const NOT_ENTITLED = 'Massive refused the call: the plan of the configured key does not include dividend data (upgrade the plan)';

/** `{"status": "ERROR" | "NOT_AUTHORIZED", "error" | "message": "..."}`, the envelope of every Massive error. */
function isErrorBody(json: unknown): json is Record<string, unknown> {
  return (
    isObject(json) &&
    typeof json.status === 'string' &&
    json.status.toUpperCase() !== 'OK' &&
    (typeof json.error === 'string' || typeof json.message === 'string')
  );
}

/** What an error body says of the key or the plan, if it is about them. */
function accountProblem(json: unknown): string | undefined {
  if (!isErrorBody(json)) return undefined;
  if (String(json.status).toUpperCase() === 'NOT_AUTHORIZED') return NOT_ENTITLED;
  const text = errorText(json);
  if (!/api ?key/i.test(text)) return undefined;
  return unauthorisedMessage(json);
}

function errorText(json: unknown): string {
  return isObject(json) ? String(json.error ?? json.message ?? '') : '';
}

function unauthorisedMessage(json: unknown): string {
  const text = errorText(json);
  if (KEY_NOT_PROVIDED.test(text)) return 'Massive refused the call: no API key was sent (set MASSIVE_API_KEY)';
  return 'Massive refused the call: the configured API key is unknown or revoked (check MASSIVE_API_KEY)';
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const cleaned = value.trim().replace(/,/g, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(cleaned)) return undefined;
  return Number(cleaned);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function error(message: string): ClassifiedDividends {
  return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', message) };
}

function unexpected(drift: string, what: string): UnreadableAnswerError {
  return new UnreadableAnswerError(drift, `Massive sent ${what}`);
}

function badRecord(index: number, what: string): UnreadableAnswerError {
  return new UnreadableAnswerError('dividend-record', `Massive sent a dividend record (#${index + 1}) that ${what}`);
}
