// Property tests over every query parameter of every route: whatever a caller sends, the answer is a
// valid 200 or a 400/404 JSON error in the one shape (never a 5xx), and every request the service then
// makes upstream has only the documented path, parameter names and key. Runs are bounded and seeded:
// set FC_SEED / FC_RUNS to replay or widen; fast-check prints the seed and the counterexample on failure.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { Client } from 'undici';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { ALPHA_VANTAGE_FUNCTIONS, FUNCTION_NAMES, ownerOf, parameterIndex } from '../../../src/wire/alpha-vantage/functions.js';
import { INDICATOR_PARAM_NAMES, INDICATORS, INTERVALS, SERIES_TYPES } from '../../../src/wire/alpha-vantage/indicators.js';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { hostileQuery, pct, validSymbol } from './arbitraries.js';
import { describe, recordUpstreamRequests, type SeenRequest, upstreamProblems } from './upstream-requests.js';
import { NO_FALLBACK, PREMIUM_PLAN, UNCAPPED } from '../../helpers/config.js';

/**
 * These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget,
 * pacing or caller limit, on a premium plan (the free plan's refusals have a test of their own).
 */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK, ...PREMIUM_PLAN };

const SEED = Number(process.env.FC_SEED ?? 20_260_611);
const RUNS = Number(process.env.FC_RUNS ?? 150);

interface Target {
  running: RunningApp;
  client: Client;
  seen: SeenRequest[];
  statuses: Map<number, number>;
}

async function target(t: TestContext, env: Record<string, string> = {}): Promise<Target> {
  const running = await startApp(t, { env: { ...ANSWERS_ENV, ...env } });
  // A client of its own: paths go on the wire exactly as generated, without URL normalisation.
  const client = new Client(running.url);
  t.after(() => client.close());
  return { running, client, seen: recordUpstreamRequests(running.sandbox), statuses: new Map() };
}

async function send(target: Target, path: string): Promise<TestResponse> {
  const res = await target.client.request({ method: 'GET', path });
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const answer = target.running.scan.response({ status: res.statusCode, headers: res.headers, body, text });
  // Whatever was sent, the answer is one the OpenAPI document describes.
  target.running.contract.assert('GET', path, answer);
  return answer;
}

/**
 * /query adds Alpha Vantage's own key ("Error Message" or "Information") beside `error`, same text, and may
 * answer a 200 in CSV (`datatype=csv`, or a CSV-only function); on a free plan a premium function is a 503.
 */
function assertAnswer(res: TestResponse, path: string, alphaVantageKey = false, statuses = [200, 400, 404]): void {
  const where = `GET ${path.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
  assert.ok(statuses.includes(res.status), `status: ${where}`);
  if (alphaVantageKey && res.status === 200 && String(res.headers['content-type']).startsWith('text/csv')) {
    assert.match(res.text, /^[^\r\n,]+(,[^\r\n,]*)+\r?\n/, `CSV header line: ${where}`);
    return;
  }
  assert.match(String(res.headers['content-type']), /^application\/json/, `content type: ${where}`);
  assert.notEqual(res.body, undefined, `JSON body: ${where}`);
  if (res.status === 200) return;
  const error = res.body.error;
  assert.ok(ERROR_CODES.includes(error?.code), `error code: ${where}`);
  assert.equal(error.status, res.status, where);
  assert.equal(typeof error.message, 'string', where);
  assert.equal(typeof error.requestId, 'string', where);
  if (!alphaVantageKey) return assert.deepEqual(Object.keys(res.body), ['error'], where);
  const key = res.status === 429 || res.status === 503 ? 'Information' : 'Error Message';
  assert.deepEqual(Object.keys(res.body), ['error', key], where);
  assert.equal(res.body[key], error.message, where);
}

function assertUpstreams(target: Target, from: number): void {
  for (const event of target.seen.slice(from)) {
    const problems = upstreamProblems(event, target.running.config);
    assert.deepEqual(problems, [], `changed upstream request: ${describe(event)}`);
  }
}

async function fuzz(
  target: Target,
  route: string,
  query: fc.Arbitrary<string>,
  numRuns = RUNS,
  alphaVantageKey = false,
  statuses?: number[],
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(query, async (q) => {
      const from = target.seen.length;
      const path = q === '' ? route : `${route}?${q}`;
      const res = await send(target, path);
      target.statuses.set(res.status, (target.statuses.get(res.status) ?? 0) + 1);
      assertAnswer(res, path, alphaVantageKey, statuses);
      assertUpstreams(target, from);
    }),
    { numRuns, seed: SEED, includeErrorInReport: true },
  );
  // Background refreshes land after their request: check every upstream request once more at the end.
  assertUpstreams(target, 0);
}

/** The generators must reach both sides, or the property proves nothing. */
function assertExplored(target: Target, statuses: number[]): void {
  for (const status of statuses)
    assert.ok((target.statuses.get(status) ?? 0) > 0, `no ${status} among ${JSON.stringify([...target.statuses])}`);
}

/** Mostly valid values, sometimes a near miss; the mutations in hostileQuery add the rest. */
const mostly = (valid: fc.Arbitrary<string>, nearMiss: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: nearMiss });
const symbol = mostly(validSymbol.map(pct), fc.constantFrom('IBM%00', 'I%20BM', 'A'.repeat(21), '..%2FIBM', 'IBM%2Capikey', '%5EGSPC%0A'));
const anyCase = (values: readonly string[]) =>
  fc.constantFrom(...values).chain((v) => fc.constantFrom(v, v.toLowerCase(), v.toUpperCase()));

test('provider-a quote: any symbol value or extra parameter gives 200/400/404, never a changed upstream URL', async (t) => {
  const fuzzer = await target(t);
  await fuzz(fuzzer, '/api/provider-a/quote', hostileQuery({ symbol }));
  assertExplored(fuzzer, [200, 400]);
  assert.ok(
    fuzzer.seen.some((e) => e.query.get('function') === 'GLOBAL_QUOTE'),
    'reached the upstream',
  );
});

test('provider-a technical: every parameter fuzzed', async (t) => {
  const fuzzer = await target(t);
  const query = hostileQuery(
    {
      symbol,
      indicator: mostly(
        anyCase(INDICATORS),
        fc.constantFrom('TIME_SERIES_DAILY', 'GLOBAL_QUOTE', 'LISTING_STATUS', 'RSI%26apikey%3Devil', 'RSI%00'),
      ),
      interval: mostly(anyCase(INTERVALS), fc.constantFrom('2min', 'yearly', 'daily%00', 'daily%26function%3DRSI')),
      time_period: mostly(
        fc.integer({ min: 2, max: 1_000 }).map(String),
        fc.constantFrom('-1', '0', '1001', '14.5', '1e3', '0x10', '%2014', '014', '99999999999999999999'),
      ),
      series_type: mostly(anyCase(SERIES_TYPES), fc.constantFrom('volume', 'close%26apikey%3Dx')),
    },
    ['symbol'],
  );
  await fuzz(fuzzer, '/api/provider-a/technical', query);
  assertExplored(fuzzer, [200, 400]);
});

/** Values for the indicators' optional parameters: mostly plain, sometimes a spelling the service refuses. */
const optionValue = mostly(
  fc.oneof(
    fc.integer({ min: 1, max: 1_000 }).map(String),
    fc.integer({ min: 0, max: 8 }).map(String),
    fc.constantFrom('0.02', '0.2', '2.5', '1'),
  ),
  fc.constantFrom('0', '-1', '1e1', '0x10', '%2B5', '%205', '5%20', '', '1001', 'abc', '5%26apikey%3Devil', '0.2%00'),
);
const indicatorOptions = Object.fromEntries(INDICATOR_PARAM_NAMES.map((name) => [name, optionValue]));
const month = mostly(
  fc.constantFrom('2024-01', '2023-12', '2025-06'),
  fc.constantFrom('2024-13', '1999-12', '2024-1', '202401', '2024-01%26x%3D1'),
);

test('provider-a technical: the optional indicator parameters fuzzed, applied only where they belong', async (t) => {
  const fuzzer = await target(t);
  const query = hostileQuery(
    {
      symbol,
      indicator: anyCase(['MACD', 'STOCH', 'BBANDS', 'ADOSC', 'ULTOSC', 'SAR', 'RSI']),
      interval: anyCase(INTERVALS),
      month,
      ...indicatorOptions,
    },
    ['symbol', 'indicator'],
  );
  await fuzz(fuzzer, '/api/provider-a/technical', query);
  assertExplored(fuzzer, [200, 400]);
});

/** Values for the parameters only forwarded functions take: mostly plausible, sometimes hostile. */
const OWNED_PARAMS = new Set([
  'symbol',
  'keywords',
  'interval',
  'outputsize',
  'month',
  'time_period',
  'series_type',
  'extended_hours',
  'adjusted',
]);
const forwardedValue = mostly(
  fc.constantFrom(
    'USD',
    'eur',
    'BTC',
    'JPY',
    'IBM,AAPL',
    'monthly',
    'annual',
    '10year',
    '3month',
    '2024-01-02',
    'technology',
    '50',
    'true',
    'delisted',
    'AAPL',
  ),
  fc.constantFrom('', 'XXX', '%00', 'x%26apikey%3Devil', 'USD%0D%0A', 'a'.repeat(300), '%E2%80%AE', 'daily%26function%3DOVERVIEW'),
);
const forwardedParams = Object.fromEntries(
  [...parameterIndex().keys()]
    .filter((name) => !OWNED_PARAMS.has(name) && !INDICATOR_PARAM_NAMES.includes(name))
    .map((name) => [name, forwardedValue]),
);
/** The functions the service answers itself, drawn more often than the rest. */
const OFTEN = ['GLOBAL_QUOTE', 'SYMBOL_SEARCH', 'TIME_SERIES_DAILY', 'TIME_SERIES_INTRADAY', 'RSI', 'SMA'];
const PREMIUM_FUNCTIONS = ALPHA_VANTAGE_FUNCTIONS.filter((f) => f.premium).map((f) => f.name);

test("provider-a query: every function and parameter fuzzed; the caller's apikey never goes upstream", async (t) => {
  const fuzzer = await target(t);
  const query = hostileQuery(
    {
      function: mostly(
        fc.oneof(anyCase(OFTEN), anyCase(FUNCTION_NAMES)),
        fc.constantFrom('OVERVIEW', 'NOT_A_FUNCTION', 'GLOBAL_QUOTE%26apikey%3Devil', 'RSI%00', ''),
      ),
      symbol,
      keywords: mostly(
        fc.constantFrom('micro', 'IBM', 'Tesco%20PLC', 'bank%20of', 'Nestl%C3%A9'),
        fc.constantFrom('', '%3Cscript%3E', 'a'.repeat(65), 'x%26function%3DRSI'),
      ),
      interval: mostly(anyCase([...INTERVALS, 'annual', 'quarterly']), fc.constantFrom('2min', 'daily%00', '')),
      outputsize: mostly(anyCase(['compact', 'full']), fc.constantFrom('huge', 'full%26x%3D1')),
      datatype: mostly(fc.constantFrom('json', 'JSON', 'csv'), fc.constantFrom('CSV', 'xml', '')),
      month,
      time_period: mostly(fc.integer({ min: 2, max: 1_000 }).map(String), fc.constantFrom('1', '14.0', '1e2', '%2014')),
      series_type: mostly(anyCase(SERIES_TYPES), fc.constantFrom('volume', '')),
      extended_hours: mostly(anyCase(['true', 'false']), fc.constantFrom('yes', '1', '')),
      adjusted: mostly(anyCase(['true', 'false']), fc.constantFrom('no', '0')),
      apikey: fc.constantFrom('CALLERKEY123', 'demo', 'x%26function%3DOVERVIEW', ''),
      ...indicatorOptions,
      ...forwardedParams,
    },
    ['function'],
  );
  await fuzz(fuzzer, '/api/provider-a/query', query, RUNS, true);
  assertExplored(fuzzer, [200, 400]);
  const functions = new Set(fuzzer.seen.map((e) => e.query.get('function')));
  const reached = ['GLOBAL_QUOTE', 'SYMBOL_SEARCH', 'TIME_SERIES_DAILY', 'RSI'].filter((fn) => functions.has(fn));
  assert.ok(reached.length >= 3 && functions.size > 6, `reached the upstream with ${[...functions].join(', ')}`);
  const forwarded = [...functions].filter((fn) => fn !== null && ownerOf(fn) === undefined);
  assert.ok(forwarded.length > 3, `forwarded ${forwarded.join(', ')}`);
  assert.ok(fuzzer.seen.every((e) => !e.query.toString().includes('CALLERKEY123')));
});

test('provider-a query on a free plan: a premium function is the premium notice (503) or a 400, never a provider call', async (t) => {
  const fuzzer = await target(t, { ALPHA_VANTAGE_PLAN: 'free' });
  const query = hostileQuery(
    {
      function: anyCase(PREMIUM_FUNCTIONS),
      symbol,
      interval: mostly(anyCase(INTERVALS), fc.constantFrom('2min', '')),
      series_type: anyCase(SERIES_TYPES),
      datatype: fc.constantFrom('json', 'csv'),
      ...forwardedParams,
    },
    ['function'],
  );
  await fuzz(fuzzer, '/api/provider-a/query', query, 60, true, [400, 503]);
  assertExplored(fuzzer, [503]);
  assert.deepEqual(fuzzer.seen.filter((e) => e.upstream === 'alpha-vantage').map(describe), []);
});

test('provider-a search and daily: every parameter fuzzed', async (t) => {
  const fuzzer = await target(t);
  const keywords = mostly(
    fc.constantFrom('micro', 'ibm', 'Tesco%20PLC', 'Nestl%C3%A9', 'a'),
    fc.constantFrom('', '%3Cscript%3E', 'a'.repeat(65), 'x%26function%3DRSI', '%00'),
  );
  await fuzz(fuzzer, '/api/provider-a/search', hostileQuery({ keywords }), 60);
  await fuzz(
    fuzzer,
    '/api/provider-a/daily',
    hostileQuery({ symbol, outputsize: mostly(anyCase(['compact', 'full']), fc.constantFrom('huge', '')) }, ['symbol']),
    60,
  );
  assertExplored(fuzzer, [200, 400]);
});

/** A cursor as the service encodes it, with fields an attacker chose. */
const forgedCursor = fc
  .record({
    v: fc.oneof(fc.constant(1), fc.jsonValue()),
    s: fc.oneof(fc.constant(null), validSymbol, fc.string()),
    l: fc.oneof(fc.integer({ min: -2, max: 1_200 }), fc.jsonValue()),
    c: fc.oneof(fc.constantFrom('YWN0aXZlPXRydWU', 'abc&apiKey=evil', '../../v1/x', 'http://evil.example/'), fc.string({ maxLength: 40 })),
  })
  .map((state) => Buffer.from(JSON.stringify(state)).toString('base64url'));

test('provider-b dividends: symbol, limit, real and forged cursors', async (t) => {
  const fuzzer = await target(t);
  const first = await fuzzer.running.get('/api/provider-b/dividends?symbol=AAPL&limit=2');
  const real = new URL(first.body.next, 'http://x').searchParams.get('cursor') ?? '';
  const query = hostileQuery(
    {
      symbol: fc.oneof(symbol, fc.constant('AAPL')),
      limit: mostly(
        fc.oneof(fc.integer({ min: 1, max: 1_000 }).map(String), fc.constant('2')),
        fc.constantFrom('0', '-1', '1001', '1.5', '1e2', '%2010'),
      ),
      cursor: fc.oneof(
        fc.constant(real),
        forgedCursor,
        fc.base64String({ maxLength: 60 }).map(pct),
        fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
      ),
    },
    [],
  );
  await fuzz(fuzzer, '/api/provider-b/dividends', query);
  assertExplored(fuzzer, [200, 400]);
  assert.ok(
    fuzzer.seen.some((e) => e.path === '/v3/reference/dividends'),
    'reached the upstream',
  );
});

/** Lists of symbols, up to thousands of them (the URL stays under the 16 KiB header limit). */
const symbolList = fc.oneof(
  { weight: 3, arbitrary: fc.array(symbol, { minLength: 0, maxLength: 60 }).map((l) => l.join(',')) },
  { weight: 1, arbitrary: fc.array(fc.stringMatching(/^[A-Z]{1,4}$/), { minLength: 1_000, maxLength: 2_500 }).map((l) => l.join(',')) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('IBM', 'AAPL', 'ibm', ' aapl ', ''), { minLength: 100, maxLength: 1_000 })
      .map((l) => l.map(pct).join(',')),
  },
);

for (const broker of ['ibkr', 'tastytrade']) {
  test(`broker quotes (${broker}): symbol lists, hostile entries and thousands of symbols`, async (t) => {
    const fuzzer = await target(t, { BROKER: broker });
    await fuzz(fuzzer, '/api/broker/quotes', hostileQuery({ symbols: symbolList }), 120);
    assertExplored(fuzzer, [200, 400]);
  });
}

test('routes without parameters ignore anything a caller adds', async (t) => {
  const fuzzer = await target(t);
  for (const route of [
    '/api/market/overview',
    '/api/broker/health',
    '/api/broker/accounts',
    '/api/broker/positions',
    '/api/system/status',
  ]) {
    fuzzer.statuses.clear();
    await fuzz(fuzzer, route, hostileQuery({}), 40);
    assertExplored(fuzzer, [200]);
  }
});
