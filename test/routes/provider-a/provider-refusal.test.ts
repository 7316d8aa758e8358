// Provider A's own limits, as the live service words them today: the daily-cap body (which also says
// "sparingly" and "unlock all premium endpoints") is a refusal for the day it names, on every route that
// reaches provider A, never "needs a premium plan"; the guard backs off, so no further call is sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS } from '../../../src/budget/budget-guard.js';
import { dayOf } from '../../../src/budget/budget-ledger.js';
import { startApp } from '../../helpers/app.js';

/** The service believes it has 500 calls a day; the key (the simulator) allows one. */
const KEY_ALLOWS_ONE = { alphaVantage: { callsPerMinute: 0, callsPerDay: 1, burstPerSecond: 0 } };
const SERVICE = { ALPHA_VANTAGE_CALLS_PER_DAY: '500', ALPHA_VANTAGE_MIN_INTERVAL_MS: '0' };

test('without the fallback: 429 QUOTA_EXHAUSTED with a Retry-After of the day, on /quote, /technical and /query, and no second call', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...SERVICE, QUOTE_FALLBACK: 'none' }, sandbox: KEY_ALLOWS_ONE });
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).status, 200);

  const refused = await get('/api/provider-a/quote?symbol=MSFT');
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
  const retryAfter = Number(refused.headers['retry-after']);
  // The day the body names, with the guard's margin: never a minute, never "premium".
  assert.ok(
    retryAfter >= DAY_MS / 1000 && retryAfter <= Math.ceil(dayOf({ perMinute: 0, perDay: 0, minIntervalMs: 0 }) / 1000) + 1,
    String(retryAfter),
  );
  const calls = sandbox.alphaVantage.count();
  assert.equal(calls, 2);

  for (const path of [
    '/api/provider-a/technical?symbol=MSFT&indicator=RSI',
    '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=AAPL',
    '/api/provider-a/quote?symbol=KO',
  ]) {
    const res = await get(path);
    assert.equal(res.status, 429, `${path}: ${res.text}`);
    assert.equal(res.body.error.code, 'QUOTA_EXHAUSTED', path);
    assert.ok(Number(res.headers['retry-after']) > DAY_MS / 1000 - 60, path);
  }
  assert.equal(
    (await get('/api/provider-a/query?function=RSI&symbol=AAPL')).body.Information !== undefined,
    true,
    'Alpha Vantage clients see an Information key',
  );
  assert.equal(sandbox.alphaVantage.count(), calls, 'backed off: provider A was not called again');
  // What was cached before the refusal is still served.
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).status, 200);
});

test('with the fallback: the refused quote and indicator come from Yahoo, and provider A is not called again', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...SERVICE, QUOTE_FALLBACK: 'yahoo' }, sandbox: KEY_ALLOWS_ONE });
  // The first call is spent on a search, so the next quote meets the cap.
  assert.equal((await get('/api/provider-a/search?keywords=micro')).status, 200);
  for (const path of [
    '/api/provider-a/quote?symbol=MSFT',
    '/api/provider-a/quote?symbol=IBM',
    '/api/provider-a/technical?symbol=IBM&indicator=RSI',
  ]) {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'yahoo', path);
  }
  assert.ok(sandbox.alphaVantage.count() <= 2, `provider A was called ${sandbox.alphaVantage.count()} times`);
});
