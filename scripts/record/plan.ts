// What `npm run record` asks each provider: a fixed, named list of requests, as data. A name is the
// recording's name in test/fixtures/recorded/<provider>/recordings.json: a request that is exactly one
// already in the corpus keeps that recording's name (tests find it by name), any other gets a new name.
// Requests are sent in this order, one provider's calls spaced as its limits ask; `{name}` in a path,
// header or body is filled in at run time, from the credentials or from an earlier answer (`provides`).
import { SNAPSHOT_FIELDS } from '../../src/upstreams/ibkr/parse-snapshot.js';
import { USER_AGENT as TASTYTRADE_USER_AGENT } from '../../src/upstreams/tastytrade/tastytrade-client.js';
import { BROWSER_USER_AGENT } from '../../src/upstreams/yahoo/yahoo-chart-source.js';

export const PROVIDERS = ['alpha-vantage', 'yahoo', 'massive', 'ibkr', 'tastytrade'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** An answer as the plan's hooks see it. */
export interface Answer {
  status: number;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
}

export interface PlannedRequest {
  /** The recording's name (kebab-case); its body file is `<name>.json` (or `.txt`) unless it exists already. */
  name: string;
  method: 'GET' | 'POST';
  /** The provider's path below its base URL, encoded as sent (`/v8/finance/chart/%5EGSPC`). */
  path: string;
  /** Recorded and sent (credentials never go here: see ProviderPlan.authQuery). */
  query?: Record<string, string>;
  /** Sent as JSON; recorded with every credential replaced by REDACTED. */
  body?: Record<string, string>;
  /** The status this request should get (default 200); any other answer is recorded under a name of its own. */
  status?: number;
  /** Notes of a new recording: what it is for. An existing recording keeps its own notes. */
  notes: string;
  /** Values read from this answer for later requests, e.g. the account number for the positions path. */
  provides?: Record<string, (answer: Answer) => string | undefined>;
  /** Ask again (`waitMs` before each attempt, `attempts` in all) until `done`; only the last answer is recorded. */
  until?: { attempts: number; waitMs: number; done: (answer: Answer) => boolean; wanted: string };
  /** Without the provider's auth headers (the token request itself). */
  anonymous?: boolean;
  /**
   * Before anything is recorded: a reason to skip the whole provider (the IBKR gateway running without a
   * logged-in session), or undefined to go on.
   */
  gate?: (answer: Answer) => string | undefined;
  /** The rest of the provider's list depends on this answer: anything unexpected stops the provider as a failure. */
  required?: string;
}

export interface ProviderPlan {
  provider: Provider;
  label: string;
  /** Environment variables without which the provider is skipped. */
  needs: readonly string[];
  /** Least time between the starts of two calls, and why. */
  spacingMs: number;
  spacingReason: string;
  /** Never more calls than this in one run. */
  maxCalls?: number;
  /** Calls a day the provider's free plan allows, when it counts them (Alpha Vantage: 25). */
  callsPerDay?: number;
  /** Headers on every call. */
  headers?: Record<string, string>;
  /** Headers carrying credentials: sent on every call but `anonymous` ones, never recorded. */
  authHeaders?: Record<string, string>;
  /** Query parameters carrying credentials: sent, never recorded. */
  authQuery?: Record<string, string>;
  /**
   * An answer that is a notice rather than the data asked for (Alpha Vantage's limit and premium notices):
   * the name to record it under instead, and whether to stop calling the provider.
   */
  notice?: (answer: Answer, request: PlannedRequest, date: string) => { name: string; notes: string; stop: boolean } | undefined;
  requests: readonly PlannedRequest[];
}

const AV_SOURCE = 'Recorded by npm run record.';

/** Alpha Vantage's only-key answers ("Note", "Information"): a premium notice, or else a limit. */
function alphaVantageNotice(
  answer: Answer,
  request: PlannedRequest,
  date: string,
): { name: string; notes: string; stop: boolean } | undefined {
  const body = answer.json;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const keys = Object.keys(body);
  if (keys.length === 0 || !keys.every((k) => k === 'Note' || k === 'Information')) return undefined;
  const text = keys.map((k) => String((body as Record<string, unknown>)[k])).join(' ');
  const fn = (request.query?.function ?? 'call').toLowerCase().replace(/_/g, '-');
  if (/\bthis is a premium endpoint\b/i.test(text)) {
    return {
      name: `premium-endpoint-notice-${fn}-${date}`,
      notes: `Premium notice answered to ${request.name}'s request (function ${request.query?.function}); the recording ${request.name} was left as it was.`,
      stop: false,
    };
  }
  return {
    name: `limit-notice-${date}`,
    notes: `Limit notice answered to ${request.name}'s request; npm run record stopped calling Alpha Vantage for the day, so the recordings after it in the list were not refreshed.`,
    stop: true,
  };
}

const av = (name: string, query: Record<string, string>, notes: string): PlannedRequest => ({
  name,
  method: 'GET',
  path: '/query',
  query,
  notes: `${AV_SOURCE} ${notes}`,
});
const chart = (name: string, symbol: string, range: string, interval: string, notes: string, status?: number): PlannedRequest => ({
  name,
  method: 'GET',
  path: `/v8/finance/chart/${encodeURIComponent(symbol)}`,
  query: { range, interval },
  ...(status === undefined ? {} : { status }),
  notes: `Recorded by npm run record. ${notes}`,
});

function firstAccountOf(answer: Answer, read: (item: Record<string, unknown>) => unknown): string | undefined {
  const list = Array.isArray(answer.json) ? answer.json : (answer.json as { data?: { items?: unknown } } | undefined)?.data?.items;
  const first = Array.isArray(list) ? (list[0] as Record<string, unknown> | undefined) : undefined;
  const value = first === undefined ? undefined : read(first);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A snapshot row with any field besides its conid: the gateway has started sending data. */
function snapshotPopulated(answer: Answer): boolean {
  return (
    Array.isArray(answer.json) &&
    answer.json.some((row) => typeof row === 'object' && row !== null && Object.keys(row).some((k) => /^\d+$/.test(k)))
  );
}

const IBKR_CONIDS = '265598,8314'; // AAPL and IBM on their US listings

export const PLAN: readonly ProviderPlan[] = [
  {
    provider: 'alpha-vantage',
    label: 'Alpha Vantage',
    needs: ['ALPHA_VANTAGE_API_KEY'],
    spacingMs: 1_500,
    spacingReason: 'free key: 1 call a second, 25 a day',
    maxCalls: 20,
    callsPerDay: 25,
    authQuery: { apikey: '{alphaVantageKey}' },
    notice: alphaVantageNotice,
    requests: [
      av('global-quote-msft', { function: 'GLOBAL_QUOTE', symbol: 'MSFT' }, 'A known symbol.'),
      av(
        'global-quote-unknown-symbol-nosuchticker',
        { function: 'GLOBAL_QUOTE', symbol: 'NOSUCHTICKER' },
        'An unknown symbol: expected {"Global Quote": {}} with HTTP 200.',
      ),
      av(
        'rsi-msft-daily',
        { function: 'RSI', symbol: 'MSFT', interval: 'daily', time_period: '14', series_type: 'close' },
        "RSI with the service's defaults (time_period 14, series_type close).",
      ),
      av('macd-ibm-daily', { function: 'MACD', symbol: 'IBM', interval: 'daily', series_type: 'open' }, 'MACD daily.'),
      av(
        'bbands-ibm-weekly',
        {
          function: 'BBANDS',
          symbol: 'IBM',
          interval: 'weekly',
          time_period: '5',
          series_type: 'close',
          nbdevup: '3',
          nbdevdn: '3',
          matype: '0',
        },
        'BBANDS weekly.',
      ),
      av('stoch-ibm-daily', { function: 'STOCH', symbol: 'IBM', interval: 'daily' }, 'STOCH daily (no time_period, no series_type).'),
      av(
        'sma-msft-15min',
        { function: 'SMA', symbol: 'MSFT', interval: '15min', time_period: '10', series_type: 'close' },
        'An intraday indicator.',
      ),
      av('symbol-search-ba', { function: 'SYMBOL_SEARCH', keywords: 'BA' }, 'Symbol search.'),
      av('time-series-daily-msft', { function: 'TIME_SERIES_DAILY', symbol: 'MSFT', outputsize: 'compact' }, 'Daily series, compact.'),
      av('time-series-weekly-msft', { function: 'TIME_SERIES_WEEKLY', symbol: 'MSFT' }, 'Weekly series.'),
      av('time-series-monthly-msft', { function: 'TIME_SERIES_MONTHLY', symbol: 'MSFT' }, 'Monthly series.'),
      av(
        'time-series-intraday-msft-1min',
        { function: 'TIME_SERIES_INTRADAY', symbol: 'MSFT', interval: '1min', outputsize: 'compact' },
        'Intraday series, 1min.',
      ),
      av(
        'time-series-intraday-msft-5min',
        { function: 'TIME_SERIES_INTRADAY', symbol: 'MSFT', interval: '5min', outputsize: 'compact' },
        'Intraday series at the service\'s default interval (5min): "Time Series (5min)".',
      ),
    ],
  },
  {
    provider: 'yahoo',
    label: 'Yahoo chart API',
    needs: [],
    spacingMs: 1_000,
    spacingReason: 'no published limit; Yahoo turns heavy users away',
    headers: { 'user-agent': BROWSER_USER_AGENT },
    requests: [
      chart('chart-aapl-1d-1d', 'AAPL', '1d', '1d', "A stock's one-day chart, as the overview and the quote fallback ask."),
      chart('chart-gspc-1d-1d', '^GSPC', '1d', '1d', 'An index (path encodes ^ as %5E).'),
      chart('chart-gc-f-1d-1d', 'GC=F', '1d', '1d', 'A future (path encodes = as %3D).'),
      chart('chart-btc-usd-1d-1d', 'BTC-USD', '1d', '1d', 'Crypto (trades around the clock, UTC).'),
      chart('chart-aapl-5y-1d', 'AAPL', '5y', '1d', 'A long daily range, as the indicator fallback reads.'),
      chart('chart-aapl-5d-1m', 'AAPL', '5d', '1m', 'Intraday, 1-minute bars (Yahoo keeps about 7 days of them).'),
      chart('chart-aapl-1mo-5m', 'AAPL', '1mo', '5m', 'Intraday, 5-minute bars.'),
      chart('chart-aapl-6mo-60m', 'AAPL', '6mo', '60m', 'Intraday, hourly bars.'),
      chart(
        'chart-unknown-symbol-404',
        'NOSUCHSYMBOLXYZ',
        '1d',
        '1d',
        'An unknown symbol: expected HTTP 404 with chart.error "Not Found".',
        404,
      ),
    ],
  },
  {
    provider: 'massive',
    label: 'Massive',
    needs: ['MASSIVE_API_KEY'],
    spacingMs: 13_000,
    spacingReason: 'free plan: 5 calls a minute',
    authHeaders: { authorization: 'Bearer {massiveKey}' },
    requests: [
      {
        name: 'dividends-aapl-limit-100',
        method: 'GET',
        path: '/v3/reference/dividends',
        query: { ticker: 'AAPL', limit: '100', order: 'desc', sort: 'ex_dividend_date' },
        notes: 'Recorded by npm run record. One ticker, as the service asks by default (limit 100, newest first).',
      },
      {
        name: 'dividends-all-tickers-limit-10',
        method: 'GET',
        path: '/v3/reference/dividends',
        query: { limit: '10', order: 'desc', sort: 'ex_dividend_date' },
        notes: "Recorded by npm run record. Without a ticker: every ticker's dividends, newest first.",
      },
      {
        name: 'dividends-qqqy-limit-1-next-url',
        method: 'GET',
        path: '/v3/reference/dividends',
        query: { ticker: 'QQQY', limit: '1', sort: 'ex_dividend_date' },
        notes: 'Recorded by npm run record. limit=1, so the page carries next_url.',
      },
      {
        name: 'dividends-unknown-ticker-empty',
        method: 'GET',
        path: '/v3/reference/dividends',
        query: { ticker: 'NOSUCHTICKER', limit: '10', order: 'desc', sort: 'ex_dividend_date' },
        notes: 'Recorded by npm run record. An unknown ticker: expected "results": [] and no next_url.',
      },
    ],
  },
  {
    provider: 'ibkr',
    label: 'IBKR Client Portal Gateway',
    needs: [],
    spacingMs: 250,
    spacingReason: 'at most 5 a second; the gateway allows 10',
    requests: [
      {
        name: 'auth-status',
        method: 'GET',
        path: '/iserver/auth/status',
        notes: 'Recorded by npm run record from a logged-in gateway.',
        gate: (answer) => {
          if (answer.status === 401) return 'the gateway is running but nobody is logged in (HTTP 401): log in through its web page first';
          if ((answer.json as { authenticated?: unknown } | undefined)?.authenticated !== true) {
            return 'the gateway has no authenticated brokerage session: log in through its web page first';
          }
          return undefined;
        },
      },
      {
        name: 'tickle',
        method: 'POST',
        path: '/tickle',
        body: {},
        notes: 'Recorded by npm run record. POST with the JSON body {} (without one the gateway answers 411).',
      },
      {
        name: 'portfolio-accounts',
        method: 'GET',
        path: '/portfolio/accounts',
        notes: 'Recorded by npm run record. Account ids, names and aliases scrubbed.',
        provides: { account: (a) => firstAccountOf(a, (item) => item.accountId ?? item.id) },
      },
      {
        name: 'portfolio-positions-page-0',
        method: 'GET',
        path: '/portfolio/{account}/positions/0',
        notes: "Recorded by npm run record. The first account's first page of positions.",
      },
      {
        name: 'iserver-accounts',
        method: 'GET',
        path: '/iserver/accounts',
        notes: 'Recorded by npm run record. Read once per session before market data snapshots.',
      },
      {
        name: 'secdef-search-aapl',
        method: 'GET',
        path: '/iserver/secdef/search',
        query: { symbol: 'AAPL' },
        notes: 'Recorded by npm run record. Contract search as the service sends it (symbol only).',
      },
      {
        name: 'snapshot-aapl-ibm-first-call',
        method: 'GET',
        path: '/iserver/marketdata/snapshot',
        query: { conids: IBKR_CONIDS, fields: SNAPSHOT_FIELDS },
        notes:
          "Recorded by npm run record. The first snapshot of the conids with the service's fields: expected without fields (it only subscribes), unless the session had asked for them already.",
      },
      {
        name: 'snapshot-aapl-ibm-populated',
        method: 'GET',
        path: '/iserver/marketdata/snapshot',
        query: { conids: IBKR_CONIDS, fields: SNAPSHOT_FIELDS },
        until: { attempts: 5, waitMs: 1_000, done: snapshotPopulated, wanted: 'a row with fields' },
        notes: 'Recorded by npm run record. The same snapshot asked again until rows carry fields.',
      },
    ],
  },
  {
    provider: 'tastytrade',
    label: 'Tastytrade',
    needs: ['TASTYTRADE_CLIENT_SECRET', 'TASTYTRADE_REFRESH_TOKEN'],
    spacingMs: 500,
    spacingReason: 'no published limit',
    headers: { 'user-agent': TASTYTRADE_USER_AGENT },
    authHeaders: { authorization: 'Bearer {accessToken}' },
    requests: [
      {
        name: 'oauth-token',
        method: 'POST',
        path: '/oauth/token',
        body: { grant_type: 'refresh_token', refresh_token: '{tastytradeRefreshToken}', client_secret: '{tastytradeClientSecret}' },
        anonymous: true,
        required: 'every other call needs the access token (check TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN)',
        notes: 'Recorded by npm run record. The shape only: the access token (and any other token) is scrubbed.',
        provides: {
          accessToken: (a) => {
            const t = (a.json as { access_token?: unknown } | undefined)?.access_token;
            return typeof t === 'string' ? t : undefined;
          },
        },
      },
      {
        name: 'customer-accounts',
        method: 'GET',
        path: '/customers/me/accounts',
        notes: 'Recorded by npm run record. Account numbers, nicknames and external ids scrubbed.',
        provides: {
          account: (a) => firstAccountOf(a, (item) => (item.account as Record<string, unknown> | undefined)?.['account-number']),
        },
      },
      {
        name: 'positions-include-marks',
        method: 'GET',
        path: '/accounts/{account}/positions',
        query: { 'include-marks': 'true' },
        notes: "Recorded by npm run record. The first account's positions with marks, as the service asks.",
      },
      {
        name: 'market-data-by-type-btc-aapl-tsla',
        method: 'GET',
        path: '/market-data/by-type',
        query: { cryptocurrency: 'BTC/USD', equity: 'AAPL,TSLA' },
        notes: 'Recorded by npm run record. Quotes by instrument type.',
      },
    ],
  },
];
