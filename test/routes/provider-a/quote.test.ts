import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const QUOTE = '/api/provider-a/quote';

test('a quote has exactly one key, ten fields in the documented formats, and is cached', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const first = await get(`${QUOTE}?symbol=ibm`);
  assert.equal(first.status, 200);
  assert.deepEqual(Object.keys(first.body), ['Global Quote']);
  const quote = first.body['Global Quote'];
  assert.equal(Object.keys(quote).length, 10);
  assert.equal(quote['01. symbol'], 'IBM');
  assert.match(quote['05. price'], /^\d+\.\d{4}$/);
  assert.match(quote['09. change'], /^-?\d+\.\d{4}$/);
  assert.match(quote['10. change percent'], /^-?\d+\.\d{4}%$/);
  assert.equal(first.headers['x-cache'], 'MISS');
  assert.equal(first.headers['x-data-mode'], 'sandbox');
  assert.match(String(first.headers['cache-control']), /max-age=\d+, stale-while-revalidate=\d+/);

  const second = await get(`${QUOTE}?symbol=IBM`);
  assert.equal(second.headers['x-cache'], 'HIT');
  assert.equal(second.text, first.text);
  assert.equal(sandbox.alphaVantage.count('/query'), 1);
});

test('If-None-Match with the ETag answers 304 with no body', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const first = await get(`${QUOTE}?symbol=MSFT`);
  const etag = String(first.headers.etag);
  const second = await get(`${QUOTE}?symbol=MSFT`, { 'if-none-match': etag });
  assert.equal(second.status, 304);
  assert.equal(second.text, '');
});

test('missing, empty, malformed and repeated symbols are 400s in the one error shape', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const cases: [string, string][] = [
    ['', 'MISSING_PARAMETER'],
    ['?symbol=', 'MISSING_PARAMETER'],
    ['?symbol=IBM%26apikey%3Dstolen', 'INVALID_PARAMETER'],
    ['?symbol=..%2F..%2Fetc%2Fpasswd', 'INVALID_PARAMETER'],
    ['?symbol=ABCDEFGHIJKLMNOPQRSTU', 'INVALID_PARAMETER'],
    ['?symbol=IBM&symbol=MSFT', 'INVALID_PARAMETER'],
    ['?symbol=%00', 'INVALID_PARAMETER'],
  ];
  for (const [query, code] of cases) {
    const res = await get(QUOTE + query);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, code, query);
    assert.equal(res.body.error.status, 400);
    assert.equal(typeof res.body.error.requestId, 'string');
    assert.equal(res.headers['x-request-id'], res.body.error.requestId);
  }
  assert.equal(sandbox.alphaVantage.count(), 0, 'no bad input reaches the upstream');
});

test('the upstream receives only the documented parameters', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  await get(`${QUOTE}?symbol=AAPL&apikey=attacker&function=TIME_SERIES_DAILY`);
  const [event] = await seen;
  assert.deepEqual([...event.query.keys()].sort(), ['apikey', 'function', 'symbol']);
  assert.equal(event.query.get('function'), 'GLOBAL_QUOTE');
  assert.notEqual(event.query.get('apikey'), 'attacker');
});

test('upstream faults become 502 or 504 JSON errors, and nothing bad is cached', async (t) => {
  const { app, get, sandbox } = await startApp(t, { env: { ...ANSWERS_ENV, UPSTREAM_TIMEOUT_MS: '300' } });
  // Seven faults in a row would open the circuit (its own tests: test/hardening/faults); here each must show.
  app.deps.health.configureBreakers({ failureThreshold: 100 });
  const av = sandbox.alphaVantage;
  const expectations: [Parameters<typeof av.setFaults>[0], number, string][] = [
    [{ fault: 'http5xx' }, 502, 'UPSTREAM_ERROR'],
    [{ fault: 'html200' }, 502, 'UPSTREAM_ERROR'],
    [{ fault: 'malformed' }, 502, 'UPSTREAM_ERROR'],
    [{ fault: 'drop' }, 502, 'UPSTREAM_ERROR'],
    [{ fault: 'reset-mid-body' }, 502, 'UPSTREAM_ERROR'],
    [{ latencyMs: 1_000 }, 504, 'UPSTREAM_TIMEOUT'],
    [{ fault: 'slow-drip' }, 504, 'UPSTREAM_TIMEOUT'],
  ];
  for (const [faults, status, code] of expectations) {
    av.setFaults(faults);
    const res = await get(`${QUOTE}?symbol=KO`);
    assert.equal(res.status, status, JSON.stringify(faults));
    assert.equal(res.body.error.code, code);
    assert.doesNotMatch(res.text, /127\.0\.0\.1|apikey|stack/i);
  }
  av.clearFaults();
  const ok = await get(`${QUOTE}?symbol=KO`);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['x-cache'], 'MISS');
});

test('a limit body is a 429 QUOTA_EXHAUSTED with Retry-After, and the guard backs off', async (t) => {
  // The service's own guard is off here, so the simulated plan (5 a minute) is what refuses.
  const { get, sandbox } = await startApp(t, {
    env: ANSWERS_ENV,
    sandbox: { alphaVantage: { callsPerMinute: 5, callsPerDay: 0, burstPerSecond: 0 } },
  });
  const av = sandbox.alphaVantage;
  // Spend the simulator's own per-minute allowance (5) so it answers with its Note body.
  for (const symbol of ['AAPL', 'MSFT', 'GOOGL', 'AMZN', 'NVDA']) assert.equal((await get(`${QUOTE}?symbol=${symbol}`)).status, 200);
  const refused = await get(`${QUOTE}?symbol=META`);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  const callsBefore = av.count('/query');
  const again = await get(`${QUOTE}?symbol=TSLA`);
  assert.equal(again.status, 429, 'the guard backs off instead of calling again');
  assert.equal(av.count('/query'), callsBefore);
  const cached = await get(`${QUOTE}?symbol=AAPL`);
  assert.equal(cached.status, 200, 'cached data is still served');
});

test('the budget guard refuses before calling, with Retry-After', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '2' } });
  assert.equal((await get(`${QUOTE}?symbol=AAPL`)).status, 200);
  assert.equal((await get(`${QUOTE}?symbol=MSFT`)).status, 200);
  const refused = await get(`${QUOTE}?symbol=IBM`);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
  const retryAfter = Number(refused.headers['retry-after']);
  // The guard counts windows 2 % long (at most 2 s) so a call sent as a window reopens cannot land inside it.
  assert.ok(retryAfter >= 1 && retryAfter <= 62, `Retry-After ${retryAfter}`);
  assert.equal(sandbox.alphaVantage.count('/query'), 2);
});

test('a stale entry is served at once while one refresh runs in the background', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...ANSWERS_ENV, CACHE_QUOTE_FRESH_SECONDS: '0' } });
  assert.equal((await get(`${QUOTE}?symbol=PEP`)).headers['x-cache'], 'MISS');
  const refreshed = once(sandbox.alphaVantage, 'request');
  const stale = await get(`${QUOTE}?symbol=PEP`);
  assert.equal(stale.status, 200);
  assert.equal(stale.headers['x-cache'], 'STALE');
  assert.match(String(stale.headers['cache-control']), /max-age=0/);
  await refreshed;
  assert.equal(sandbox.alphaVantage.count('/query'), 2);
});

test('live mode without a key answers 503 PROVIDER_NOT_CONFIGURED', async (t) => {
  const { get } = await startApp(t, {
    env: ANSWERS_ENV,
    configure: (c) => ({ ...c, mode: 'live', alphaVantage: { ...c.alphaVantage, apiKey: undefined } }),
  });
  const res = await get(`${QUOTE}?symbol=IBM`);
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'PROVIDER_NOT_CONFIGURED');
  assert.equal(res.headers['x-data-mode'], 'live');
});

test('with Redis unreachable the refusal says so: the shared store is down and the service is being conservative', async (t) => {
  const { get, sandbox } = await startApp(t, {
    env: { ...ANSWERS_ENV, REDIS_URL: 'redis://127.0.0.1:1', ALPHA_VANTAGE_CALLS_PER_MINUTE: '5', ALPHA_VANTAGE_CALLS_PER_DAY: '500' },
  });
  const res = await get(`${QUOTE}?symbol=IBM`);
  assert.equal(res.status, 429);
  assert.equal(res.body.error.code, 'QUOTA_EXHAUSTED');
  assert.match(res.body.error.message, /shared store \(Redis\) is unreachable/);
  assert.match(res.body.error.message, /conservative/);
  assert.doesNotMatch(res.body.error.message, /budget is spent/);
  assert.ok(Number(res.headers['retry-after']) >= 1 && Number(res.headers['retry-after']) <= 60);
  assert.equal(sandbox.alphaVantage.count('/query'), 0, 'nothing was sent');
});
