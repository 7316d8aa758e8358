// TECHNICAL_SOURCE, end to end against the sandbox: `auto` (the default) computes from the stored Yahoo
// bars what they give exactly and asks provider A for the rest; `computed` never asks provider A for an
// indicator; without Yahoo (QUOTE_FALLBACK=none) `auto` is provider A alone and `computed` does not start.
// X-Data-Source says where each answer's values came from.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/core/config.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { startApp } from '../../helpers/app.js';
import { PREMIUM_PLAN } from '../../helpers/config.js';

const TECH = '/api/provider-a/technical';

test('auto: daily, weekly and intraday indicators computed from the stored bars, with no provider-A call', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo' } });
  for (const path of [
    `${TECH}?symbol=MSFT&indicator=RSI&interval=daily`,
    `${TECH}?symbol=MSFT&indicator=MACD&interval=weekly`,
    `${TECH}?symbol=MSFT&indicator=BBANDS&interval=15min`,
    '/api/provider-a/query?function=EMA&symbol=MSFT&interval=daily&time_period=20&series_type=close',
  ]) {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'yahoo', path);
  }
  assert.equal(sandbox.alphaVantage.count(), 0, 'provider A was not asked');
  const status = await get('/api/system/status');
  assert.deepEqual(status.body.dataSources.technical, { 'alpha-vantage': 0, yahoo: 4 });
});

test('auto asks provider A for what the stored bars cannot give as it would: a past month, monthly intervals, OBV and AD', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo' } });
  for (const path of [
    `${TECH}?symbol=MSFT&indicator=SMA&interval=5min&month=2026-01`,
    `${TECH}?symbol=MSFT&indicator=RSI&interval=monthly`,
    `${TECH}?symbol=MSFT&indicator=OBV&interval=daily`,
    `${TECH}?symbol=MSFT&indicator=AD&interval=60min`,
  ]) {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'alpha-vantage', path);
  }
  assert.equal(sandbox.alphaVantage.count(), 4);
  assert.equal(sandbox.yahoo.count(), 0, 'no bars were fetched for them');
});

test('auto: Yahoo unable and nothing stored, provider A answers; stored bars answer stale rather than spend provider A', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo', CACHE_TECHNICAL_DAILY_FRESH_SECONDS: '0' } });
  sandbox.yahoo.failSymbol('AAPL', 500);
  sandbox.yahoo.failSymbol('KO', 404);
  for (const symbol of ['AAPL', 'KO']) {
    const res = await get(`${TECH}?symbol=${symbol}&indicator=RSI&interval=daily`);
    assert.equal(res.status, 200, `${symbol}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'alpha-vantage', symbol);
  }
  assert.equal(sandbox.alphaVantage.count(), 2);

  // MSFT's bars are stored; with the fresh window at 0 every answer is stale and refreshes in the background.
  const first = await get(`${TECH}?symbol=MSFT&indicator=RSI&interval=daily`);
  assert.equal(first.headers['x-data-source'], 'yahoo');
  sandbox.yahoo.failSymbol('MSFT', 500);
  const stale = await get(`${TECH}?symbol=MSFT&indicator=RSI&interval=daily`);
  assert.equal(stale.status, 200);
  assert.equal(stale.headers['x-data-source'], 'yahoo');
  assert.equal(stale.headers['x-cache'], 'STALE');
  assert.deepEqual(stale.body, first.body);
  assert.equal(sandbox.alphaVantage.count(), 2, 'no provider-A call for a symbol with stored bars');
});

test('auto: a symbol Yahoo does not know is not asked of Yahoo again for a while; provider A answers it', async (t) => {
  // A premium key: MACD is asked of provider A too (test/routes/provider-a/query-plan.test.ts has the free plan).
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo', ...PREMIUM_PLAN } });
  sandbox.yahoo.failSymbol('KO', 404);
  for (const indicator of ['RSI', 'MACD', 'SMA']) {
    const res = await get(`${TECH}?symbol=KO&indicator=${indicator}&interval=daily`);
    assert.equal(res.headers['x-data-source'], 'alpha-vantage', indicator);
  }
  assert.equal(sandbox.yahoo.count(chartPath('KO')), 1);
  assert.equal(sandbox.alphaVantage.count(), 3);
});

test('computed: never a provider-A call for an indicator; what cannot be computed is 503 PROVIDER_NOT_CONFIGURED', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo', TECHNICAL_SOURCE: 'computed' } });
  for (const path of [`${TECH}?symbol=MSFT&indicator=RSI&interval=monthly`, `${TECH}?symbol=MSFT&indicator=OBV&interval=daily`]) {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'yahoo', path);
  }
  const month = await get(`${TECH}?symbol=MSFT&indicator=SMA&interval=5min&month=2026-01`);
  assert.equal(month.status, 503, month.text);
  assert.equal(month.body.error.code, 'PROVIDER_NOT_CONFIGURED');
  assert.match(month.body.error.message, /past month of intraday history.*TECHNICAL_SOURCE=computed/);
  // Yahoo failing: its error, not provider A.
  sandbox.yahoo.failSymbol('AAPL', 500);
  const failing = await get(`${TECH}?symbol=AAPL&indicator=RSI&interval=daily`);
  assert.equal(failing.status, 502, failing.text);
  assert.equal(sandbox.alphaVantage.count(), 0);
});

test('QUOTE_FALLBACK=none: auto is provider A alone, Yahoo never asked; computed does not start', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { QUOTE_FALLBACK: 'none' } });
  const res = await get(`${TECH}?symbol=MSFT&indicator=RSI&interval=daily`);
  assert.equal(res.headers['x-data-source'], 'alpha-vantage');
  assert.equal(sandbox.yahoo.count(), 0);

  for (const env of [
    { TECHNICAL_SOURCE: 'computed', QUOTE_FALLBACK: 'none' },
    { TECHNICAL_SOURCE: 'computed', OVERVIEW_SOURCE: 'none' },
  ]) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.problems.some((p) => /^TECHNICAL_SOURCE=computed reads Yahoo's bars/.test(p)),
      JSON.stringify(env),
    );
  }
  assert.equal(loadConfig({}).technical.source, 'auto');
  assert.equal(loadConfig({ OVERVIEW_SOURCE: 'none' }).technical.source, 'auto', 'auto without Yahoo is provider A alone');
  assert.throws(() => loadConfig({ TECHNICAL_SOURCE: 'yahoo' }), /TECHNICAL_SOURCE must be one of auto, provider, computed/);
});
