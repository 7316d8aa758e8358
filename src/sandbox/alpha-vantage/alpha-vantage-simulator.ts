// The simulated Alpha Vantage: `GET /query` for every documented function (wire/alpha-vantage/functions.ts)
// as the recorded answers show them, always HTTP 200, JSON or `datatype=csv`, errors and limits included (in
// JSON, whatever was asked), so the adapter runs the same code path against it as against the real API. A
// premium function answers the premium notice to a key on the free plan.
import { csvOf } from '../../wire/alpha-vantage/csv.js';
import { ALPHA_VANTAGE_FUNCTIONS, functionSpec } from '../../wire/alpha-vantage/functions.js';
import { indicatorSpec, INTRADAY_INTERVALS } from '../../wire/alpha-vantage/indicators.js';
import {
  isSeriesFunction,
  OUTPUT_SIZES,
  type OutputSize,
  SERIES_INTERVALS,
  type SeriesFunction,
  type SeriesInterval,
  takesOutputSize,
} from '../../wire/alpha-vantage/time-series.js';
import { SimulatedUpstream, type SimRequest, type SimResponse } from '../simulated-upstream.js';
import { findInstrument } from '../universe.js';
import { CallLimits, type LimitVerdict } from './call-limits.js';
import { monthEnd } from '../../core/us-market-time.js';
import { globalQuote } from './global-quote.js';
import {
  INVALID_API_KEY,
  PREMIUM_ENDPOINT,
  burstInformation,
  dailyCapInformation,
  invalidApiCall,
  perMinuteNote,
} from '../../wire/alpha-vantage/notices.js';
import { functionAnswer } from './function-answers.js';
import { symbolSearch } from './symbol-search.js';
import { readIndicatorParams, technicalIndicatorBody } from './technical-indicator.js';
import { timeSeriesBody } from './time-series.js';

export interface AlphaVantageSimulatorOptions {
  /** API keys the simulator accepts; any other (or none) gets the invalid-key body. */
  validKeys: string[];
  /** Per key; 0 disables a limit. Defaults: 5 per minute, 500 per day, 1 per second. */
  callsPerMinute?: number;
  callsPerDay?: number;
  burstPerSecond?: number;
  /** Early arrival forgiven on the second and minute windows (default 100 ms; see call-limits.ts). */
  jitterAllowanceMs?: number;
  /** Functions that answer the premium-endpoint notice on the free plan (default: the documented premium ones). */
  premiumFunctions?: string[];
  /** The plan of the valid keys (default free): a premium function answers only a premium key. */
  plan?: 'free' | 'premium';
  /** The clock limits and prices follow (tests inject one). */
  now?: () => number;
  host?: string;
  port?: number;
}

/** The documented per-day figure, used in the per-minute notice when the daily cap is off. */
const DOCUMENTED_DAILY = 500;
/** Today's free key's daily figure, which the burst notice names even when the daily cap is off. */
const FREE_KEY_DAILY = 25;

export function createAlphaVantageSimulator(options: AlphaVantageSimulatorOptions): SimulatedUpstream {
  const validKeys = new Set(options.validKeys);
  const premium = new Set(
    (options.premiumFunctions ?? ALPHA_VANTAGE_FUNCTIONS.filter((f) => f.premium).map((f) => f.name)).map((f) => f.toUpperCase()),
  );
  const premiumPlan = options.plan === 'premium';
  const limits = new CallLimits({
    perMinute: options.callsPerMinute ?? 5,
    perDay: options.callsPerDay ?? 500,
    perSecond: options.burstPerSecond ?? 1,
    jitterAllowanceMs: options.jitterAllowanceMs,
  });
  const now = options.now ?? Date.now;

  const handler = (req: SimRequest): SimResponse => {
    if (req.url.pathname !== '/query') {
      return { status: 404, body: '<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>', headers: { 'content-type': 'text/html' } };
    }
    const query = req.url.searchParams;
    const key = query.get('apikey');
    if (key === null || !validKeys.has(key)) return ok(INVALID_API_KEY);
    const nowMs = now();
    const verdict = limits.take(key, nowMs);
    if (verdict !== 'ok') return ok(limitBody(verdict, limits.options));
    const fn = (query.get('function') ?? '').trim().toUpperCase();
    if (premium.has(fn) && !premiumPlan) return ok(PREMIUM_ENDPOINT);
    return answer(fn, query, body(fn, query, nowMs));
  };

  return new SimulatedUpstream({ name: 'alpha-vantage', handler, host: options.host, port: options.port });
}

function body(fn: string, query: URLSearchParams, nowMs: number): unknown {
  if (fn === 'GLOBAL_QUOTE') return quoteBody(query.get('symbol'), nowMs);
  if (indicatorSpec(fn) !== undefined) return indicatorBody(fn, query, nowMs);
  if (fn === 'SYMBOL_SEARCH') return searchBody(query.get('keywords'), nowMs);
  if (isSeriesFunction(fn)) return seriesBody(fn, query, nowMs);
  return functionAnswer(fn, query, nowMs);
}

function ok(body: unknown): SimResponse {
  return { status: 200, body };
}

/**
 * The body in the format asked: CSV where the function answers CSV and `datatype=csv` (or always, for the
 * CSV-only ones); JSON otherwise. Errors and notices stay JSON, as Alpha Vantage sends them.
 */
function answer(fn: string, query: URLSearchParams, json: unknown): SimResponse {
  const formats = functionSpec(fn)?.formats;
  const text = (json as { csv?: unknown }).csv;
  if (typeof text === 'string') return { status: 200, body: text, headers: { 'content-type': 'text/csv' } };
  const datatype = query.get('datatype');
  if (datatype !== null && datatype !== 'json' && datatype !== 'csv') return ok(invalidApiCall(fn));
  const data = isData(json);
  if (formats === 'both' && datatype === 'csv' && data) {
    const rendered = csvOf(json as Record<string, unknown>);
    if (rendered !== undefined) return { status: 200, body: rendered, headers: { 'content-type': 'text/csv' } };
  }
  return ok(json);
}

/** A data body, not Alpha Vantage's error or notice. */
function isData(json: unknown): boolean {
  if (json === null || typeof json !== 'object') return false;
  const keys = Object.keys(json);
  return keys.length > 0 && !keys.some((k) => k === 'Error Message' || k === 'Information' || k === 'Note');
}

function limitBody(verdict: Exclude<LimitVerdict, 'ok'>, limits: CallLimits['options']): unknown {
  switch (verdict) {
    case 'day':
      return dailyCapInformation(limits.perDay);
    case 'minute':
      return perMinuteNote(limits.perMinute, limits.perDay > 0 ? limits.perDay : DOCUMENTED_DAILY);
    case 'burst':
      return burstInformation(limits.perSecond, limits.perDay > 0 ? limits.perDay : FREE_KEY_DAILY);
  }
}

function quoteBody(symbol: string | null, nowMs: number): unknown {
  if (symbol === null || symbol.trim() === '') return invalidApiCall('GLOBAL_QUOTE');
  const instrument = findInstrument(symbol);
  return { 'Global Quote': instrument === undefined ? {} : globalQuote(instrument.symbol, nowMs) };
}

function indicatorBody(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const instrument = findInstrument(query.get('symbol') ?? '');
  const params = readIndicatorParams(fn, query);
  // Alpha Vantage reads `month` on intraday intervals only.
  const endMs = params !== null && INTRADAY_INTERVALS.has(params.interval) ? monthEnd(query.get('month'), nowMs) : nowMs;
  if (instrument === undefined || params === null || endMs === null) return invalidApiCall(fn);
  return technicalIndicatorBody(fn, instrument.symbol, params, endMs);
}

function searchBody(keywords: string | null, nowMs: number): unknown {
  if (keywords === null || keywords.trim() === '') return invalidApiCall('SYMBOL_SEARCH');
  return symbolSearch(keywords, nowMs);
}

/** Parameters the function does not take are ignored, as the real API ignores them. */
function seriesBody(fn: SeriesFunction, query: URLSearchParams, nowMs: number): unknown {
  const instrument = findInstrument(query.get('symbol') ?? '');
  const outputsize = query.get('outputsize') ?? 'compact';
  const intraday = fn === 'TIME_SERIES_INTRADAY';
  const interval = query.get('interval') ?? '';
  const endMs = intraday ? monthEnd(query.get('month'), nowMs) : nowMs;
  const validSize = !takesOutputSize(fn) || (OUTPUT_SIZES as readonly string[]).includes(outputsize);
  const validInterval = !intraday || (SERIES_INTERVALS as readonly string[]).includes(interval);
  // `adjusted` changes nothing here: the price model has no splits or dividends to adjust for.
  const extendedHours = intraday ? (query.get('extended_hours') ?? 'true') : 'true';
  const validFlags = ['true', 'false'].includes(extendedHours) && ['true', 'false'].includes(query.get('adjusted') ?? 'true');
  if (instrument === undefined || !validSize || !validInterval || !validFlags || endMs === null) return invalidApiCall(fn);
  const request = {
    fn,
    symbol: instrument.symbol,
    outputsize: outputsize as OutputSize,
    interval: (intraday ? interval : '5min') as SeriesInterval,
    extendedHours: extendedHours === 'true',
  };
  return timeSeriesBody(request, endMs);
}
