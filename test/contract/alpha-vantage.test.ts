// Every recorded Alpha Vantage answer (test/fixtures/recorded/alpha-vantage/) through the adapter's own
// pure functions, as the client runs them: classifyAlphaVantageBody first, then the parser the request's
// `function` picks (a function the service forwards passes as sent; a CSV answer through
// classifyAlphaVantageCsv). Expected values are read from the recorded bytes here, never typed in, so the test
// says "our adapter reads what the real service sent" and nothing about what we wish it sent. A recording
// no case here can place fails under its own name, so a new recording is covered or seen.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ApiError, driftOf, NotFoundAnswerError } from '../../src/core/errors.js';
import {
  type Classified,
  classifyAlphaVantageBody,
  classifyAlphaVantageCsv,
  LIMIT_WINDOWS,
  type LimitWindow,
} from '../../src/upstreams/alpha-vantage/classify-body.js';
import { functionSpec, ownerOf } from '../../src/wire/alpha-vantage/functions.js';
import { indicatorSpec, sectionKey } from '../../src/wire/alpha-vantage/indicators.js';
import { parseGlobalQuote } from '../../src/upstreams/alpha-vantage/parse-global-quote.js';
import { parseSymbolSearch } from '../../src/upstreams/alpha-vantage/parse-symbol-search.js';
import { MATCH_FIELDS, QUOTE_FIELDS } from '../../src/wire/alpha-vantage/bodies.js';
import { parseTechnical } from '../../src/upstreams/alpha-vantage/parse-technical.js';
import { parseTimeSeries } from '../../src/upstreams/alpha-vantage/parse-time-series.js';
import { isSeriesFunction, type SeriesInterval, seriesKey } from '../../src/wire/alpha-vantage/time-series.js';
import { corpusFiles, type Loaded, recordings } from '../helpers/recorded.js';

type Json = Record<string, any>;

const NOTICE_KEYS = ['Note', 'Information'];

/** The windows a limit text names, read from its words ("5 calls per minute", "(25 requests per day)"). */
function windowsNamed(text: string): LimitWindow[] {
  const named = new Set([...text.matchAll(/\bper (second|minute|day)\b/gi)].map((m) => (m[1] as string).toLowerCase()));
  return LIMIT_WINDOWS.filter((w) => named.has(w));
}

function expectError(classified: Classified, name: string): ApiError {
  assert.equal(classified.kind, 'error', `${name}: ${JSON.stringify(classified).slice(0, 200)}`);
  return (classified as { error: ApiError }).error;
}

function expectData(classified: Classified, name: string): Json {
  assert.equal(classified.kind, 'data', `${name}: ${classified.kind === 'error' ? classified.error.message : classified.kind}`);
  return (classified as { body: Json }).body;
}

/** A notice: a refusal naming the windows its text names, or, naming none, the premium notice it says it is. */
function checkNotice(text: string, classified: Classified, name: string): void {
  const windows = windowsNamed(text);
  // A limit or premium notice is never the provider's "not found": it is never remembered.
  assert.ok(classified.kind !== 'error' || !(classified.error instanceof NotFoundAnswerError), name);
  if (windows.length > 0) {
    assert.equal(classified.kind, 'refusal', name);
    assert.deepEqual(classified.kind === 'refusal' && classified.windows, windows, name);
    return;
  }
  assert.match(text, /premium endpoint/i, `${name}: a notice naming no window and no premium endpoint has no case here`);
  assert.equal(expectError(classified, name).code, 'PROVIDER_NOT_CONFIGURED', name);
}

function checkQuote(r: Loaded, body: Json): void {
  const raw = (r.json as Json)['Global Quote'] as Json;
  if (Object.keys(raw).length === 0) {
    // The provider's "not found": remembered by the cache (CACHE_NOT_FOUND_SECONDS).
    assert.throws(
      () => parseGlobalQuote(body),
      (e: ApiError) => e instanceof NotFoundAnswerError && e.code === 'SYMBOL_NOT_FOUND' && driftOf(e) === undefined,
      r.name,
    );
    return;
  }
  const quote = parseGlobalQuote(body)['Global Quote'];
  assert.deepEqual(Object.keys(quote), [...QUOTE_FIELDS], r.name);
  const four = (field: string) => Number(String(raw[field]).replace(/%$/, '')).toFixed(4);
  for (const field of ['02. open', '03. high', '04. low', '05. price', '08. previous close', '09. change'] as const) {
    assert.equal(quote[field], four(field), `${r.name} ${field}`);
  }
  assert.equal(quote['10. change percent'], `${four('10. change percent')}%`, r.name);
  assert.equal(quote['06. volume'], String(Number(raw['06. volume'])), r.name);
  assert.equal(quote['01. symbol'], raw['01. symbol'], r.name);
  assert.equal(quote['07. latest trading day'], raw['07. latest trading day'], r.name);
  if (r.request.query?.symbol !== undefined) assert.equal(quote['01. symbol'], r.request.query.symbol, r.name);
  // The recorded change is price − previous close as the strings read.
  assert.ok(Math.abs(Number(quote['05. price']) - Number(quote['08. previous close']) - Number(quote['09. change'])) < 1e-9, r.name);
}

function checkTechnical(r: Loaded, fn: string, body: Json): void {
  const raw = r.json as Json;
  const parsed = parseTechnical(body, fn);
  const section = sectionKey(fn);
  assert.deepEqual(parsed['Meta Data'], raw['Meta Data'], r.name);
  assert.deepEqual(parsed[section], raw[section], r.name);
  assert.equal(Object.keys(parsed[section] ?? {}).length, Object.keys(raw[section]).length, r.name);
  const meta = raw['Meta Data'] as Json;
  // The meta echoes the request: symbol, interval, and the numbers asked for (as JSON numbers).
  const query = r.request.query ?? {};
  assert.equal(meta['1: Symbol'], query.symbol, r.name);
  assert.equal(meta['4: Interval'], query.interval, r.name);
  if (query.time_period !== undefined)
    assert.equal(Object.entries(meta).find(([k]) => /: Time Period$/.test(k))?.[1], Number(query.time_period), r.name);
  if (query.series_type !== undefined)
    assert.equal(Object.entries(meta).find(([k]) => /: Series Type$/.test(k))?.[1], query.series_type, r.name);
  // Every row carries exactly the indicator's value keys.
  const valueKeys = [...(indicatorSpec(fn)?.valueKeys ?? [])].sort();
  for (const [time, row] of Object.entries(raw[section] as Json)) assert.deepEqual(Object.keys(row).sort(), valueKeys, `${r.name} ${time}`);
}

function checkSearch(r: Loaded, body: Json): void {
  const raw = (r.json as Json).bestMatches as Json[];
  const parsed = parseSymbolSearch(body).bestMatches;
  assert.equal(parsed.length, raw.length, r.name);
  parsed.forEach((match, i) => {
    assert.deepEqual(Object.keys(match), [...MATCH_FIELDS], r.name);
    for (const field of MATCH_FIELDS) assert.equal(match[field], raw[i]?.[field], `${r.name} #${i} ${field}`);
  });
}

function checkSeries(r: Loaded, fn: string, body: Json): void {
  if (!isSeriesFunction(fn)) throw new Error('unreachable');
  const raw = r.json as Json;
  const interval = r.request.query?.interval as SeriesInterval | undefined;
  const key = seriesKey(fn, interval);
  const parsed = parseTimeSeries(body, fn, interval);
  assert.deepEqual(parsed['Meta Data'], raw['Meta Data'], r.name);
  assert.deepEqual(parsed[key], raw[key], r.name);
  assert.equal(Object.keys(parsed[key] ?? {}).length, Object.keys(raw[key]).length, r.name);
}

/** What the adapter must make of one recording; throws naming the recording when no case fits. */
function checkRecording(r: Loaded): void {
  assert.equal(r.request.path, '/query', `${r.name}: not an Alpha Vantage /query answer`);
  const fn = String(r.request.query?.function ?? '').toUpperCase();
  assert.equal(r.status, 200, `${r.name}: Alpha Vantage answers 200 for everything, errors and limits included`);

  if (r.json === undefined && r.request.query?.datatype === 'csv') {
    // A CSV answer: forwarded as the text it is.
    assert.deepEqual(classifyAlphaVantageCsv(r.text, undefined), { kind: 'csv', text: r.text }, r.name);
    return;
  }
  if (r.json === undefined) {
    // Only the message string was published, not its key: either key must read the same.
    for (const key of NOTICE_KEYS) checkNotice(r.text.trim(), classifyAlphaVantageBody({ [key]: r.text.trim() }), `${r.name} (as ${key})`);
    return;
  }
  const raw = r.json as Json;
  const classified = classifyAlphaVantageBody(raw);
  const keys = Object.keys(raw);

  if (typeof raw['Error Message'] === 'string') {
    const error = expectError(classified, r.name);
    assert.match(raw['Error Message'], /invalid api call/i, `${r.name}: an Error Message of another wording has no case here`);
    assert.equal(error.code, 'SYMBOL_NOT_FOUND', r.name);
    // Honest: the function the request named has nothing for this symbol (which may exist for another function).
    assert.equal(error.message, `Alpha Vantage has no ${fn} data for this symbol`, r.name);
    assert.equal(driftOf(error), undefined, r.name);
    assert.ok(error instanceof NotFoundAnswerError, `${r.name}: the provider's "not found", remembered`);
    return;
  }
  if (keys.length > 0 && keys.every((k) => NOTICE_KEYS.includes(k))) {
    checkNotice(keys.map((k) => String(raw[k])).join(' '), classified, r.name);
    return;
  }
  if (keys.length === 0) {
    const error = expectError(classified, r.name);
    assert.equal(error.code, 'UPSTREAM_ERROR', r.name);
    assert.equal(driftOf(error), 'empty-object', r.name);
    assert.ok(!(error instanceof NotFoundAnswerError), `${r.name}: the provider failing is asked again`);
    return;
  }
  const body = expectData(classified, r.name);
  if (fn === 'GLOBAL_QUOTE') return checkQuote(r, body);
  if (fn === 'SYMBOL_SEARCH') return checkSearch(r, body);
  if (indicatorSpec(fn) !== undefined) return checkTechnical(r, fn, body);
  if (isSeriesFunction(fn)) return checkSeries(r, fn, body);
  // A function the service forwards: passed on as Alpha Vantage sent it, key for key.
  if (functionSpec(fn) !== undefined && ownerOf(fn) === undefined) return assert.equal(body, raw, r.name);
  assert.fail(`${r.name}: no adapter function reads a ${fn} answer, and no case here places it`);
}

describe('Alpha Vantage adapter over the recorded corpus', () => {
  for (const r of recordings('alpha-vantage')) {
    test(r.name, () => checkRecording(r));
  }

  test('every body file of the corpus is listed in recordings.json (so none escapes the cases above)', () => {
    const listed = new Set(recordings('alpha-vantage').map((r) => r.body));
    const unlisted = corpusFiles('alpha-vantage').filter((f) => f !== 'recordings.json' && f !== 'SOURCES.md' && !listed.has(f));
    assert.deepEqual(unlisted, []);
  });

  test('the cases can fail: an inconsistent quote, a refusal of the wrong window, an unplaceable answer', () => {
    const msft = recordings('alpha-vantage').find((r) => r.name === 'global-quote-msft') as Loaded;
    const tampered = { ...msft, json: { 'Global Quote': { ...(msft.json as Json)['Global Quote'], '09. change': '-0.6700' } } };
    assert.throws(() => checkRecording(tampered));
    assert.throws(
      () => checkRecording({ ...msft, name: 'unknown-fn', request: { ...msft.request, query: { function: 'NOT_A_FUNCTION' } } }),
      /unknown-fn: no adapter function/,
    );
    assert.throws(() => checkNotice('Thank you! 5 calls per minute.', { kind: 'refusal', message: '', windows: ['day'] }, 'n'));
  });
});
