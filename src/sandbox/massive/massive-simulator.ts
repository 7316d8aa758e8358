// A simulated Massive (formerly Polygon.io) server: GET /v3/reference/dividends with the real query
// parameters, paging by `next_url` whose `cursor` encodes the rest of the query (as the real one does, in
// unpadded base64url), the key as `apiKey` or `Authorization: Bearer`, and the real error bodies: a missing
// key is a 400, as recorded (test/fixtures/recorded/massive/), an unknown one a 401, then 403, 429, 404.
import { randomBytes } from 'node:crypto';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { dividendCalendar, type DividendPayer, type SimDividend } from './dividend-calendar.js';
import { DIVIDEND_PAYERS } from './dividend-payers.js';

export interface MassiveSimulatorOptions {
  validKeys: readonly string[];
  /** Keys that authenticate but whose plan lacks dividend data: 403 NOT_AUTHORIZED. */
  unentitledKeys?: readonly string[];
  /** Requests per minute per key before 429 (0: no limit, the default). */
  perMinute?: number;
  /** `Retry-After` seconds on the plan-limit 429; the real service sends none, so neither do we by default. */
  retryAfterSeconds?: number;
  /** Accept the key as `Authorization: Bearer` (default true); when false only `apiKey` counts. */
  acceptBearer?: boolean;
  payers?: readonly DividendPayer[];
  now?: () => number;
  host?: string;
  port?: number;
}

/** @internal */
export const DIVIDENDS_PATH = '/v3/reference/dividends';
/** The real wording ends with the pricing page, as a recorded 403 of another endpoint does. */
const NOT_ENTITLED = 'You are not entitled to this data. Please upgrade your plan at https://polygon.io/pricing';
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 1000;
const DATE_FIELDS = ['ex_dividend_date', 'pay_date', 'record_date', 'declaration_date'] as const;
const SORT_FIELDS = new Set<string>([...DATE_FIELDS, 'ticker', 'cash_amount']);
/** Query parameters a cursor carries forward. */
const CARRIED =
  /^(ticker|limit|sort|order|frequency|dividend_type|cash_amount|(ex_dividend_date|pay_date|record_date|declaration_date)(\.(gt|gte|lt|lte))?)$/;

export class MassiveSimulator extends SimulatedUpstream {
  private readonly validKeys: Set<string>;
  private readonly unentitledKeys: Set<string>;
  private perMinute: number;
  private readonly retryAfterSeconds: number | undefined;
  private readonly acceptBearer: boolean;
  private readonly payers: readonly DividendPayer[];
  private readonly now: () => number;
  private readonly callsByKey = new Map<string, number[]>();
  private calendar: { day: string; records: SimDividend[] } | undefined;

  constructor(options: MassiveSimulatorOptions) {
    super({ name: 'massive', host: options.host, port: options.port, handler: (req) => (this as MassiveSimulator).answer(req) });
    this.validKeys = new Set(options.validKeys);
    this.unentitledKeys = new Set(options.unentitledKeys ?? []);
    this.perMinute = options.perMinute ?? 0;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.acceptBearer = options.acceptBearer ?? true;
    this.payers = options.payers ?? DIVIDEND_PAYERS;
    this.now = options.now ?? Date.now;
  }

  /** Changes the per-key plan limit (0: none) and forgets past calls. */
  setPerMinute(perMinute: number): void {
    this.perMinute = perMinute;
    this.callsByKey.clear();
  }

  /** The whole calendar, newest ex-dividend date first (for tests and tools). */
  records(): SimDividend[] {
    const day = new Date(this.now()).toISOString().slice(0, 10);
    if (this.calendar?.day !== day) this.calendar = { day, records: dividendCalendar(this.payers, this.now()) };
    return this.calendar.records;
  }

  private answer(req: SimRequest): SimResponse {
    if (req.url.pathname !== DIVIDENDS_PATH)
      return { status: 404, body: { status: 'NOT_FOUND', request_id: requestId(), message: 'Not Found' } };
    const key = req.url.searchParams.get('apiKey') ?? (this.acceptBearer ? bearer(req.headers.authorization) : undefined);
    if (key === undefined) return { status: 400, body: { status: 'ERROR', request_id: requestId(), error: 'API Key was not provided' } };
    if (!this.validKeys.has(key) && !this.unentitledKeys.has(key)) {
      return { status: 401, body: { status: 'ERROR', request_id: requestId(), error: 'Unknown API Key' } };
    }
    if (this.overLimit(key)) {
      return {
        status: 429,
        body: {
          status: 'ERROR',
          request_id: requestId(),
          error: "You've exceeded the maximum requests per minute, please wait or upgrade your subscription to continue.",
        },
        headers: this.retryAfterSeconds === undefined ? {} : { 'retry-after': String(this.retryAfterSeconds) },
      };
    }
    if (this.unentitledKeys.has(key)) {
      return { status: 403, body: { status: 'NOT_AUTHORIZED', request_id: requestId(), message: NOT_ENTITLED } };
    }
    const query = queryOf(req.url.searchParams);
    if (typeof query === 'string') return badRequest(query);
    return this.page(query, req);
  }

  private page(query: URLSearchParams, req: SimRequest): SimResponse {
    const limitText = query.get('limit');
    const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1) return badRequest('limit must be a positive integer');
    const offset = Number(query.get('offset') ?? '0');
    const sort = query.get('sort') ?? 'ex_dividend_date';
    const order = query.get('order') ?? 'desc';
    if (!SORT_FIELDS.has(sort)) return badRequest(`sort field ${sort} is not supported`);
    if (order !== 'asc' && order !== 'desc') return badRequest('order must be asc or desc');

    const matching = this.records().filter((r) => matches(r, query));
    const sorted = sort === 'ex_dividend_date' && order === 'desc' ? matching : [...matching].sort(comparator(sort, order));
    const size = Math.min(limit, MAX_LIMIT);
    const results = sorted.slice(offset, offset + size);
    const body: Record<string, unknown> = { results, status: 'OK', request_id: requestId() };
    if (offset + size < sorted.length) {
      const next = new URLSearchParams(query);
      next.set('offset', String(offset + size));
      // Unpadded base64url, as the real next_url carries it: nothing in it needs escaping.
      const cursor = Buffer.from(next.toString(), 'utf8').toString('base64url');
      body.next_url = `http://${req.headers.host ?? '127.0.0.1'}${DIVIDENDS_PATH}?cursor=${cursor}`;
    }
    return { status: 200, body };
  }

  private overLimit(key: string): boolean {
    if (this.perMinute <= 0) return false;
    const now = this.now();
    const calls = (this.callsByKey.get(key) ?? []).filter((t) => t > now - 60_000);
    const over = calls.length >= this.perMinute;
    if (!over) calls.push(now);
    this.callsByKey.set(key, calls);
    return over;
  }
}

export function createMassiveSimulator(options: MassiveSimulatorOptions): MassiveSimulator {
  return new MassiveSimulator(options);
}

/** The effective query: the cursor's, when one is given (other parameters are then ignored), else the URL's. */
function queryOf(params: URLSearchParams): URLSearchParams | string {
  const cursor = params.get('cursor');
  if (cursor === null) {
    const query = new URLSearchParams();
    for (const [name, value] of params) if (CARRIED.test(name)) query.set(name, value);
    return query;
  }
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const query = new URLSearchParams(decoded);
  if (!/^\d+$/.test(query.get('offset') ?? '')) return 'the cursor is invalid';
  return query;
}

function matches(record: SimDividend, query: URLSearchParams): boolean {
  for (const [name, value] of query) {
    if (name === 'ticker' && record.ticker !== value) return false;
    if (name === 'frequency' && String(record.frequency) !== value) return false;
    if (name === 'dividend_type' && record.dividend_type !== value) return false;
    if (name === 'cash_amount' && record.cash_amount !== Number(value)) return false;
    const [field, op] = name.split('.') as [string, string | undefined];
    if (!(DATE_FIELDS as readonly string[]).includes(field)) continue;
    const actual = record[field as (typeof DATE_FIELDS)[number]];
    if (op === undefined && actual !== value) return false;
    if (op === 'gt' && !(actual > value)) return false;
    if (op === 'gte' && !(actual >= value)) return false;
    if (op === 'lt' && !(actual < value)) return false;
    if (op === 'lte' && !(actual <= value)) return false;
  }
  return true;
}

function comparator(sort: string, order: string): (a: SimDividend, b: SimDividend) => number {
  const sign = order === 'asc' ? 1 : -1;
  return (a, b) => {
    const x = a[sort as keyof SimDividend];
    const y = b[sort as keyof SimDividend];
    const base = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return sign * base || a.ticker.localeCompare(b.ticker);
  };
}

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match?.[1];
}

function badRequest(message: string): SimResponse {
  return { status: 400, body: { status: 'ERROR', request_id: requestId(), error: message } };
}

function requestId(): string {
  return randomBytes(16).toString('hex');
}
