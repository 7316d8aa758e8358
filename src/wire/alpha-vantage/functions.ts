// Every function Alpha Vantage documents, as data: its parameters, whether it answers CSV, whether a free key
// may call it, and the family whose fresh window caches it. The drop-in route, the adapter, the simulator and
// the reference page (docs/reference/alpha-vantage-functions.md, generated from this list) all read it.
//
// Source. The documentation page itself could not be fetched where this list was written (no internet), so it
// was transcribed from two machine-made copies of it, and the premium flags from the evidence named below:
//  - portfoliotree/alphavantage internal/scan-docs/documentation.yaml (commit 9703fbbc): a scan of the page's
//    "API Parameters" blocks: function names, required and optional parameters, the demo URLs;
//  - alphavantage/alpha_vantage_mcp api/src/av_api/tools/*.py (Alpha Vantage's own MCP server, 2025-2026):
//    the functions the scan misses (GLOBAL_QUOTE and the newer ones) and which functions take `datatype`.
// The technical indicators' parameters are the ones wire/alpha-vantage/indicators.ts already holds.
import type { AvFamily } from '../../core/config-schema.js';
import { indicatorParams, indicatorSpec, INDICATORS } from './indicators.js';
import { SERIES_FUNCTIONS } from './time-series.js';

export const FUNCTIONS_SOURCE = {
  page: 'https://www.alphavantage.co/documentation/',
  read: '2026-11-28',
  via: [
    'https://github.com/portfoliotree/alphavantage/blob/9703fbbc78d6fa3de8877490bc044901524d3ea9/internal/scan-docs/documentation.yaml',
    'https://github.com/alphavantage/alpha_vantage_mcp/tree/main/api/src/av_api/tools',
  ],
} as const;

/** `json`: JSON only (a `datatype` is ignored); `csv`: CSV only; `both`: `datatype=json|csv`. */
type Formats = 'json' | 'csv' | 'both';

export interface FunctionSpec {
  name: string;
  family: AvFamily;
  /** Documented parameters, `function`, `apikey` and `datatype` aside. */
  required: readonly string[];
  optional: readonly string[];
  formats: Formats;
  /** A free key gets Alpha Vantage's premium notice for it. */
  premium: boolean;
  /** Why the premium flag is set: an answer or a statement that can be cited. */
  premiumEvidence?: string;
  /** Parameters the documentation shows given twice (`RANGE=2023-07-01&RANGE=2023-08-31`). */
  repeatable?: readonly string[];
}

const PREMIUM_EVIDENCE: Readonly<Record<string, string>> = {
  TIME_SERIES_DAILY_ADJUSTED:
    'Alpha Vantage support, RomelTorres/alpha_vantage#349 (2023-07-30); the premium notice recorded for it in Gbox4/tstock#26 (2024-10-31)',
  FX_INTRADAY: 'OpenBB-finance/OpenBB#2981 (2022-10-21): "the intraday endpoint is premium, but the daily isn\'t"',
  // The four below rest on the page's "Premium" labels as remembered when this list was written, with the
  // third-party statements named; no premium notice for them is recorded. A flag set wrongly costs a free key
  // the function through this service; one missing costs one call, answered with the provider's own notice.
  CRYPTO_INTRADAY: "the documentation page's Premium label, as on FX_INTRADAY (no recorded notice)",
  REALTIME_BULK_QUOTES: "the documentation page's Premium label; aristath/sentinel's scraped documentation lists it premium",
  REALTIME_OPTIONS: "the documentation page's Premium label; aristath/sentinel's scraped documentation lists it premium",
  VWAP: "the documentation page's Premium label (the simulator has refused it since its first version)",
  MACD: 'the documentation page\'s Premium label; several unrelated projects compute MACD themselves because "MACD is a premium Alpha Vantage endpoint"',
};

const spec = (
  name: string,
  family: AvFamily,
  required: readonly string[],
  optional: readonly string[] = [],
  formats: Formats = 'both',
  extra: Partial<FunctionSpec> = {},
): FunctionSpec => ({
  name,
  family,
  required,
  optional,
  formats,
  premium: name in PREMIUM_EVIDENCE,
  premiumEvidence: PREMIUM_EVIDENCE[name],
  ...extra,
});

const SYMBOL = ['symbol'];
const FX_PAIR = ['from_symbol', 'to_symbol'];
const CRYPTO_PAIR = ['symbol', 'market'];
const ANALYTICS = ['SYMBOLS', 'RANGE', 'INTERVAL'];

/** The indicators the service does not compute, with their own parameters. */
const MORE_INDICATORS: Record<string, { required: string[]; optional: string[] }> = {
  MAMA: { required: ['interval', 'series_type'], optional: ['month', 'fastlimit', 'slowlimit'] },
  VWAP: { required: ['interval'], optional: ['month'] },
  MACDEXT: {
    required: ['interval', 'series_type'],
    optional: ['month', 'fastperiod', 'slowperiod', 'signalperiod', 'fastmatype', 'slowmatype', 'signalmatype'],
  },
  STOCHF: { required: ['interval'], optional: ['month', 'fastkperiod', 'fastdperiod', 'fastdmatype'] },
  STOCHRSI: { required: ['interval', 'time_period', 'series_type'], optional: ['month', 'fastkperiod', 'fastdperiod', 'fastdmatype'] },
  APO: { required: ['interval', 'series_type'], optional: ['month', 'fastperiod', 'slowperiod', 'matype'] },
  PPO: { required: ['interval', 'series_type'], optional: ['month', 'fastperiod', 'slowperiod', 'matype'] },
};

function indicator(name: string): FunctionSpec {
  const more = MORE_INDICATORS[name];
  if (more !== undefined) return spec(name, 'INDICATORS', ['symbol', ...more.required], more.optional);
  const s = indicatorSpec(name);
  const required = ['symbol', 'interval'];
  if (s?.timePeriod !== null) required.push('time_period');
  if (s?.seriesType === true) required.push('series_type');
  return spec(name, 'INDICATORS', required, ['month', ...indicatorParams(name).map((p) => p.name)]);
}

const COMMODITIES = ['WTI', 'BRENT', 'NATURAL_GAS', 'COPPER', 'ALUMINUM', 'WHEAT', 'CORN', 'COTTON', 'SUGAR', 'COFFEE', 'ALL_COMMODITIES'];

/** In the order of the documentation page, then the indicators. */
export const ALPHA_VANTAGE_FUNCTIONS: readonly FunctionSpec[] = [
  spec('TIME_SERIES_INTRADAY', 'INTRADAY', [...SYMBOL, 'interval'], ['adjusted', 'extended_hours', 'month', 'outputsize']),
  spec('TIME_SERIES_DAILY', 'SERIES', SYMBOL, ['outputsize']),
  spec('TIME_SERIES_DAILY_ADJUSTED', 'SERIES', SYMBOL, ['outputsize']),
  spec('TIME_SERIES_WEEKLY', 'SERIES', SYMBOL),
  spec('TIME_SERIES_WEEKLY_ADJUSTED', 'SERIES', SYMBOL),
  spec('TIME_SERIES_MONTHLY', 'SERIES', SYMBOL),
  spec('TIME_SERIES_MONTHLY_ADJUSTED', 'SERIES', SYMBOL),
  spec('GLOBAL_QUOTE', 'MARKET', SYMBOL),
  spec('REALTIME_BULK_QUOTES', 'MARKET', SYMBOL),
  spec('REALTIME_BULK_BID_ASK_PRICES', 'MARKET', SYMBOL),
  spec('SYMBOL_SEARCH', 'LISTINGS', ['keywords']),
  spec('MARKET_STATUS', 'MARKET', [], [], 'json'),
  spec('REALTIME_OPTIONS', 'OPTIONS', SYMBOL, ['require_greeks', 'contract', 'expiration']),
  spec('HISTORICAL_OPTIONS', 'OPTIONS', SYMBOL, ['date']),
  spec('REALTIME_PUT_CALL_RATIO', 'OPTIONS', SYMBOL, [], 'json'),
  spec('HISTORICAL_PUT_CALL_RATIO', 'OPTIONS', SYMBOL, ['date'], 'json'),
  spec('NEWS_SENTIMENT', 'NEWS', [], ['tickers', 'topics', 'time_from', 'time_to', 'sort', 'limit'], 'json'),
  spec('EARNINGS_CALL_TRANSCRIPT', 'FUNDAMENTALS', [...SYMBOL, 'quarter'], [], 'json'),
  spec('TOP_GAINERS_LOSERS', 'MARKET', [], [], 'json'),
  spec('INSIDER_TRANSACTIONS', 'FUNDAMENTALS', SYMBOL, [], 'json'),
  spec('ANALYTICS_FIXED_WINDOW', 'SERIES', [...ANALYTICS, 'CALCULATIONS'], ['OHLC'], 'json', { repeatable: ['RANGE'] }),
  spec('ANALYTICS_SLIDING_WINDOW', 'SERIES', [...ANALYTICS, 'WINDOW_SIZE', 'CALCULATIONS'], ['OHLC'], 'json', { repeatable: ['RANGE'] }),
  ...['OVERVIEW', 'ETF_PROFILE'].map((name) => spec(name, 'FUNDAMENTALS', SYMBOL, [], 'json')),
  ...['DIVIDENDS', 'SPLITS'].map((name) => spec(name, 'FUNDAMENTALS', SYMBOL)),
  ...['INCOME_STATEMENT', 'BALANCE_SHEET', 'CASH_FLOW'].map((name) => spec(name, 'FUNDAMENTALS', SYMBOL, [], 'json')),
  spec('SHARES_OUTSTANDING', 'FUNDAMENTALS', SYMBOL),
  ...['EARNINGS', 'EARNINGS_ESTIMATES'].map((name) => spec(name, 'FUNDAMENTALS', SYMBOL, [], 'json')),
  spec('LISTING_STATUS', 'LISTINGS', [], ['date', 'state'], 'csv'),
  spec('EARNINGS_CALENDAR', 'CALENDARS', [], ['symbol', 'horizon'], 'csv'),
  spec('IPO_CALENDAR', 'CALENDARS', [], [], 'csv'),
  spec('CURRENCY_EXCHANGE_RATE', 'FX', ['from_currency', 'to_currency']),
  spec('FX_INTRADAY', 'INTRADAY', [...FX_PAIR, 'interval'], ['outputsize']),
  spec('FX_DAILY', 'FX', FX_PAIR, ['outputsize']),
  ...['FX_WEEKLY', 'FX_MONTHLY'].map((name) => spec(name, 'FX', FX_PAIR)),
  spec('CRYPTO_INTRADAY', 'INTRADAY', [...CRYPTO_PAIR, 'interval'], ['outputsize']),
  ...['DIGITAL_CURRENCY_DAILY', 'DIGITAL_CURRENCY_WEEKLY', 'DIGITAL_CURRENCY_MONTHLY'].map((name) => spec(name, 'CRYPTO', CRYPTO_PAIR)),
  ...COMMODITIES.map((name) => spec(name, 'COMMODITIES', [], ['interval'])),
  spec('GOLD_SILVER_SPOT', 'MARKET', SYMBOL, [], 'json'),
  spec('GOLD_SILVER_HISTORY', 'COMMODITIES', SYMBOL, ['interval']),
  spec('REAL_GDP', 'ECONOMIC', [], ['interval']),
  spec('REAL_GDP_PER_CAPITA', 'ECONOMIC', []),
  spec('TREASURY_YIELD', 'ECONOMIC', [], ['interval', 'maturity']),
  ...['FEDERAL_FUNDS_RATE', 'CPI'].map((name) => spec(name, 'ECONOMIC', [], ['interval'])),
  ...['INFLATION', 'RETAIL_SALES', 'DURABLES', 'UNEMPLOYMENT', 'NONFARM_PAYROLL'].map((name) => spec(name, 'ECONOMIC', [])),
  spec('INDEX_DATA', 'SERIES', [...SYMBOL, 'interval']),
  spec('INDEX_CATALOG', 'LISTINGS', []),
  spec('CONGRESS_TRADES', 'FUNDAMENTALS', [], ['symbol', 'bioguide_id']),
  spec('POLITICIAN_METADATA', 'LISTINGS', [], [], 'json'),
  ...[...INDICATORS, ...Object.keys(MORE_INDICATORS)].map(indicator),
];

const BY_NAME = new Map(ALPHA_VANTAGE_FUNCTIONS.map((f) => [f.name, f]));

export function functionSpec(name: string): FunctionSpec | undefined {
  return BY_NAME.get(name);
}

export const FUNCTION_NAMES: readonly string[] = ALPHA_VANTAGE_FUNCTIONS.map((f) => f.name);

/** What the service answers itself (its stored or computed data), rather than forwarding. */
export type OwnedBy = 'quote' | 'search' | 'series' | 'technical';

const OWNED: ReadonlyMap<string, OwnedBy> = new Map<string, OwnedBy>([
  ['GLOBAL_QUOTE', 'quote'],
  ['SYMBOL_SEARCH', 'search'],
  ...SERIES_FUNCTIONS.map((fn) => [fn, 'series'] as const),
  ...INDICATORS.map((fn) => [fn, 'technical'] as const),
]);

export function ownerOf(name: string): OwnedBy | undefined {
  return OWNED.get(name);
}

/** Every documented parameter name (for the route's schema), with the functions that take it. */
export function parameterIndex(): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const f of ALPHA_VANTAGE_FUNCTIONS)
    for (const name of [...f.required, ...f.optional]) index.set(name, [...(index.get(name) ?? []), f.name]);
  return index;
}
