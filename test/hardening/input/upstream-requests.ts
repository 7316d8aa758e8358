// What the service may send upstream, per simulator: the documented paths and parameter names, each
// parameter once, values of the documented form and the sandbox key (a forwarded Alpha Vantage function:
// its documented parameter names, printable values). Anything else means a caller's
// input changed the upstream URL.
import type { Config } from '../../../src/core/config.js';
import { functionSpec, ownerOf } from '../../../src/wire/alpha-vantage/functions.js';
import {
  indicatorParams,
  indicatorSpec,
  type Interval,
  INTERVALS,
  INTRADAY_INTERVALS,
  type ParamKind,
  SERIES_TYPES,
} from '../../../src/wire/alpha-vantage/indicators.js';
import {
  isSeriesFunction,
  OUTPUT_SIZES,
  SERIES_INTERVALS,
  type SeriesFunction,
  takesOutputSize,
} from '../../../src/wire/alpha-vantage/time-series.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';

export interface SeenRequest extends SimRequestEvent {
  upstream: string;
}

const SYMBOL = /^[A-Z0-9.^=-]{1,20}$/;
const INTEGER = /^\d{1,4}$/;
const KEYWORDS = /^[\p{L}\p{N} .,&'^=/()-]{1,64}$/u;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
/** The canonical spellings the service forwards (indicator-options.ts). */
const EXTRA_VALUE: Record<ParamKind, RegExp> = {
  period: /^[1-9]\d{0,3}$/,
  matype: /^[0-8]$/,
  real: /^-?\d+(\.\d+)?$/,
  positive: /^\d+(\.\d+)?$/,
};

/** Records every request each simulator answers. */
export function recordUpstreamRequests(sandbox: Sandbox): SeenRequest[] {
  const seen: SeenRequest[] = [];
  for (const sim of sandbox.all()) sim.on('request', (event: SimRequestEvent) => seen.push({ ...event, upstream: sim.name }));
  return seen;
}

/** Names that occur more than once, or that are not in `allowed`; and required names that are missing. */
function paramProblems(query: URLSearchParams, allowed: readonly string[], required: readonly string[] = allowed): string[] {
  const names = [...query.keys()];
  const problems = names.filter((name, i) => names.indexOf(name) !== i).map((name) => `repeated ${name}`);
  for (const name of new Set(names)) if (!allowed.includes(name)) problems.push(`unexpected parameter ${name}`);
  for (const name of required) if (!query.has(name)) problems.push(`missing ${name}`);
  return problems;
}

function expect(problems: string[], ok: boolean, message: string): void {
  if (!ok) problems.push(message);
}

function alphaVantage(e: SimRequestEvent, config: Config): string[] {
  if (e.path !== '/query') return [`path ${e.path}`];
  const q = e.query;
  const fn = q.get('function') ?? '';
  const problems: string[] = [];
  expect(problems, q.get('apikey') === config.alphaVantage.apiKey, 'apikey is not the configured key');
  if (fn === 'SYMBOL_SEARCH') {
    const keywords = q.get('keywords') ?? '';
    expect(problems, KEYWORDS.test(keywords), `keywords ${JSON.stringify(keywords)}`);
    return [...problems, ...paramProblems(q, ['function', 'keywords', 'apikey'])];
  }
  if (ownerOf(fn) === undefined) return [...problems, ...forwardedProblems(fn, q)];
  expect(problems, SYMBOL.test(q.get('symbol') ?? ''), `symbol ${q.get('symbol')}`);
  if (fn === 'GLOBAL_QUOTE') return [...problems, ...paramProblems(q, ['function', 'symbol', 'apikey'])];
  if (isSeriesFunction(fn)) return [...problems, ...seriesProblems(fn, q)];
  const spec = indicatorSpec(fn);
  if (spec === undefined) return [...problems, `function ${fn} is not in the catalogue`];
  const extras = indicatorParams(fn);
  const names = ['function', 'symbol', 'interval', 'apikey', ...extras.map((p) => p.name)];
  if (spec.timePeriod !== null) names.push('time_period');
  if (spec.seriesType) names.push('series_type');
  const intraday = INTRADAY_INTERVALS.has(q.get('interval') as Interval);
  problems.push(...paramProblems(q, intraday ? [...names, 'month'] : names, names));
  expect(problems, (INTERVALS as readonly string[]).includes(q.get('interval') ?? ''), `interval ${q.get('interval')}`);
  if (q.has('series_type')) expect(problems, (SERIES_TYPES as readonly string[]).includes(q.get('series_type') ?? ''), 'series_type');
  if (q.has('time_period')) {
    const period = Number(q.get('time_period'));
    expect(problems, INTEGER.test(q.get('time_period') ?? '') && period >= 2 && period <= 1000, `time_period ${q.get('time_period')}`);
  }
  if (q.has('month')) expect(problems, MONTH.test(q.get('month') ?? ''), `month ${q.get('month')}`);
  for (const { name, kind } of extras) expect(problems, EXTRA_VALUE[kind].test(q.get(name) ?? ''), `${name} ${q.get(name)}`);
  return problems;
}

/**
 * A function the service forwards: documented, its documented parameter names only, each once (a repeatable
 * one aside), the required ones present, values printable, `datatype` only `csv` and only where it is offered.
 */
function forwardedProblems(fn: string, q: URLSearchParams): string[] {
  const spec = functionSpec(fn);
  if (spec === undefined) return [`function ${fn} is not documented`];
  const names = [...q.keys()].filter((name) => !spec.repeatable?.includes(name));
  const problems = names.filter((name, i) => names.indexOf(name) !== i).map((name) => `repeated ${name}`);
  const allowed = new Set(['function', 'apikey', ...spec.required, ...spec.optional, ...(spec.formats === 'json' ? [] : ['datatype'])]);
  for (const name of new Set(q.keys())) if (!allowed.has(name)) problems.push(`unexpected parameter ${name}`);
  for (const name of spec.required) if (!q.has(name)) problems.push(`missing ${name}`);
  if (q.has('datatype')) expect(problems, q.get('datatype') === 'csv', `datatype ${q.get('datatype')}`);
  for (const [name, value] of q) expect(problems, /^[^\p{Cc}]{1,200}$/u.test(value), `${name} ${JSON.stringify(value)}`);
  return problems;
}

function seriesProblems(fn: SeriesFunction, q: URLSearchParams): string[] {
  const names = ['function', 'symbol', 'apikey'];
  if (takesOutputSize(fn)) names.push('outputsize');
  if (fn === 'TIME_SERIES_INTRADAY') names.push('interval');
  const problems = paramProblems(q, fn === 'TIME_SERIES_INTRADAY' ? [...names, 'month', 'extended_hours', 'adjusted'] : names, names);
  for (const flag of ['extended_hours', 'adjusted'])
    if (q.has(flag)) expect(problems, ['true', 'false'].includes(q.get(flag) ?? ''), `${flag} ${q.get(flag)}`);
  if (q.has('outputsize'))
    expect(problems, (OUTPUT_SIZES as readonly string[]).includes(q.get('outputsize') ?? ''), `outputsize ${q.get('outputsize')}`);
  if (q.has('interval'))
    expect(problems, (SERIES_INTERVALS as readonly string[]).includes(q.get('interval') ?? ''), `interval ${q.get('interval')}`);
  if (q.has('month')) expect(problems, MONTH.test(q.get('month') ?? ''), `month ${q.get('month')}`);
  return problems;
}

function massive(e: SimRequestEvent, config: Config): string[] {
  if (e.path !== '/v3/reference/dividends') return [`path ${e.path}`];
  const q = e.query;
  const problems: string[] = [];
  if (q.has('apiKey')) expect(problems, q.get('apiKey') === config.massive.apiKey, 'apiKey is not the configured key');
  if (q.has('cursor')) {
    expect(problems, /^[A-Za-z0-9+/=_.~-]{1,1024}$/.test(q.get('cursor') ?? ''), 'cursor has unexpected characters');
    return [...problems, ...paramProblems(q, ['cursor', 'apiKey'], ['cursor'])];
  }
  problems.push(...paramProblems(q, ['ticker', 'limit', 'order', 'sort', 'apiKey'], ['limit', 'order', 'sort']));
  if (q.has('ticker')) expect(problems, SYMBOL.test(q.get('ticker') ?? ''), `ticker ${q.get('ticker')}`);
  const limit = Number(q.get('limit'));
  expect(problems, INTEGER.test(q.get('limit') ?? '') && limit >= 1 && limit <= 1000, `limit ${q.get('limit')}`);
  expect(problems, q.get('order') === 'desc' && q.get('sort') === 'ex_dividend_date', 'order/sort');
  return problems;
}

function yahoo(e: SimRequestEvent, config: Config): string[] {
  const match = /^\/v8\/finance\/chart\/([^/]+)$/.exec(e.path);
  if (!match?.[1]) return [`path ${e.path}`];
  const problems = paramProblems(e.query, ['range', 'interval']);
  expect(problems, config.overview.symbols.includes(decodeURIComponent(match[1])), `symbol ${match[1]} is not configured`);
  expect(problems, e.query.get('range') === '1d' && e.query.get('interval') === '1d', 'range/interval');
  return problems;
}

const IBKR_PLAIN_PATHS = [
  '/iserver/auth/status',
  '/tickle',
  '/iserver/auth/ssodh/init',
  '/iserver/reauthenticate',
  '/logout',
  '/portfolio/accounts',
  '/iserver/accounts',
];

function ibkr(e: SimRequestEvent): string[] {
  if (!e.path.startsWith('/v1/api/')) return [`path ${e.path}`];
  const path = e.path.slice('/v1/api'.length);
  const q = e.query;
  if (IBKR_PLAIN_PATHS.includes(path) || /^\/portfolio\/[A-Za-z0-9]{1,20}\/positions\/\d{1,3}$/.test(path)) return paramProblems(q, []);
  if (path === '/iserver/secdef/search') {
    return [...paramProblems(q, ['symbol']), ...(SYMBOL.test(q.get('symbol') ?? '') ? [] : [`symbol ${q.get('symbol')}`])];
  }
  if (path === '/iserver/marketdata/snapshot') {
    const problems = paramProblems(q, ['conids', 'fields']);
    expect(problems, /^\d{1,12}(,\d{1,12}){0,99}$/.test(q.get('conids') ?? ''), `conids ${q.get('conids')}`);
    expect(problems, /^\d{1,5}(,\d{1,5})*$/.test(q.get('fields') ?? ''), `fields ${q.get('fields')}`);
    return problems;
  }
  return [`path ${e.path}`];
}

function tastytrade(e: SimRequestEvent): string[] {
  const q = e.query;
  if (e.path === '/oauth/token' || e.path === '/customers/me/accounts' || e.path === '/api-quote-tokens') return paramProblems(q, []);
  if (/^\/accounts\/[A-Za-z0-9]{1,20}\/positions$/.test(e.path)) {
    return [...paramProblems(q, ['include-marks']), ...(q.get('include-marks') === 'true' ? [] : ['include-marks'])];
  }
  if (e.path === '/market-data/by-type') {
    const problems = paramProblems(q, ['equity', 'index', 'cryptocurrency'], []);
    const symbols = [...q.values()].flatMap((list) => list.split(','));
    expect(problems, symbols.length >= 1 && symbols.length <= 100, `${symbols.length} symbols`);
    for (const s of symbols) expect(problems, /^[A-Za-z0-9./^=-]{1,20}$/.test(s), `symbol ${s}`);
    return problems;
  }
  return [`path ${e.path}`];
}

/** Problems with one upstream request, or [] when it is one the service is documented to send. */
export function upstreamProblems(e: SeenRequest, config: Config): string[] {
  switch (e.upstream) {
    case 'alpha-vantage':
      return alphaVantage(e, config);
    case 'massive':
      return massive(e, config);
    case 'yahoo':
      return yahoo(e, config);
    case 'ibkr':
      return ibkr(e);
    case 'tastytrade':
      return tastytrade(e);
    default:
      return [`unknown upstream ${e.upstream}`];
  }
}

export function describe(e: SeenRequest): string {
  return `${e.upstream} ${e.method} ${e.path}?${e.query.toString()}`;
}
