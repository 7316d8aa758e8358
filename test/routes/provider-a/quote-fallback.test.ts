// The Yahoo fallback for quotes, end to end against the sandbox: when provider A cannot answer, the same
// ten fields come from Yahoo's chart, derived as the issue defines them, with X-Data-Source saying so.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { BROWSER_USER_AGENT } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { until } from '../../hardening/shutdown/waits.js';
import { httpGet, startApp } from '../../helpers/app.js';

const QUOTE = '/api/provider-a/quote';
/** Provider A's day holds one call: the first quote spends it. */
const ONE_CALL = { QUOTE_FALLBACK: 'yahoo', ALPHA_VANTAGE_CALLS_PER_DAY: '1' };

const four = (n: number) => n.toFixed(4);

test("with provider A spent, a quote comes from Yahoo: ten fields derived from the chart, the caller's symbol kept", async (t) => {
  const { get, scrape, sandbox } = await startApp(t, { env: ONE_CALL });
  const first = await get(`${QUOTE}?symbol=IBM`);
  assert.equal(first.headers['x-data-source'], 'alpha-vantage');

  const asked = once(sandbox.yahoo, 'request') as Promise<[SimRequestEvent]>;
  const res = await get(`${QUOTE}?symbol=brk.b`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-data-source'], 'yahoo');
  assert.equal(res.headers['x-cache'], 'MISS');
  const [event] = await asked;
  assert.equal(event.path, chartPath('BRK-B'));

  // The same chart, read straight from the simulator within the same minute.
  const chart = await httpGet(`${sandbox.yahoo.origin}${chartPath('BRK-B')}?range=1d&interval=1d`, { 'user-agent': BROWSER_USER_AGENT });
  const { meta, indicators } = chart.body.chart.result[0];
  const quote = res.body['Global Quote'];
  assert.deepEqual(Object.keys(res.body), ['Global Quote']);
  assert.equal(quote['01. symbol'], 'BRK.B');
  assert.equal(quote['05. price'], four(meta.regularMarketPrice));
  // As the real one-day daily chart: no previousClose, the previous session's close is chartPreviousClose.
  assert.equal(meta.previousClose, undefined);
  assert.equal(quote['08. previous close'], four(meta.chartPreviousClose));
  assert.equal(quote['09. change'], four(meta.regularMarketPrice - meta.chartPreviousClose));
  assert.equal(
    quote['10. change percent'],
    `${four(((meta.regularMarketPrice - meta.chartPreviousClose) / meta.chartPreviousClose) * 100)}%`,
  );
  assert.equal(quote['03. high'], four(Math.max(meta.regularMarketDayHigh, meta.regularMarketPrice)));
  assert.equal(quote['04. low'], four(Math.min(meta.regularMarketDayLow, meta.regularMarketPrice)));
  assert.equal(quote['06. volume'], String(meta.regularMarketVolume));
  assert.equal(quote['02. open'], four(indicators.quote[0].open[0]));
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: meta.exchangeTimezoneName }).format(meta.regularMarketTime * 1000);
  assert.equal(quote['07. latest trading day'], day);

  const again = await get(`${QUOTE}?symbol=BRK.B`);
  assert.equal(again.headers['x-cache'], 'HIT');
  assert.equal(again.headers['x-data-source'], 'yahoo');
  assert.equal(sandbox.yahoo.count(chartPath('BRK-B')), 2, 'one call by the service, one by this test');
  assert.match(String(res.headers['access-control-expose-headers']), /X-Data-Source/);

  // Counted per source: the status endpoint and /metrics.
  const status = await get('/api/system/status');
  assert.deepEqual(status.body.dataSources.quote, { 'alpha-vantage': 1, yahoo: 2 });
  const metrics = await scrape();
  assert.match(metrics.text, /^mdp_data_source_answers_total\{endpoint="quote",source="yahoo"\} 2$/m);
});

test('a later provider-A answer replaces a fallback answer, never the reverse', async (t) => {
  const { get, sandbox, app } = await startApp(t, { env: { QUOTE_FALLBACK: 'yahoo' } });
  sandbox.alphaVantage.setFaults({ fault: 'http5xx' });
  const fallback = await get(`${QUOTE}?symbol=MSFT`);
  assert.equal(fallback.headers['x-data-source'], 'yahoo');

  // Provider A is back: the fallback value is still fresh and served, while provider A is asked again
  // in the background; from then on provider A's newer value wins.
  sandbox.alphaVantage.clearFaults();
  const refreshed = once(sandbox.alphaVantage, 'request');
  const meanwhile = await get(`${QUOTE}?symbol=MSFT`);
  assert.equal(meanwhile.headers['x-data-source'], 'yahoo');
  await refreshed;
  // The simulator has answered; the refresh's value is stored a moment later.
  await until(
    async () => (await app.deps.cache.peek(`${app.deps.scopes.of('alphaVantage')}:quote:MSFT`)) !== undefined,
    "provider A's refreshed value",
  );
  const after = await get(`${QUOTE}?symbol=MSFT`);
  assert.equal(after.headers['x-data-source'], 'alpha-vantage');

  // Provider A failing again does not bring the fallback back while its own value is fresh.
  sandbox.alphaVantage.setFaults({ fault: 'http5xx' });
  const yahooCalls = sandbox.yahoo.count(chartPath('MSFT'));
  const later = await get(`${QUOTE}?symbol=MSFT`);
  assert.equal(later.headers['x-data-source'], 'alpha-vantage');
  assert.equal(sandbox.yahoo.count(chartPath('MSFT')), yahooCalls);
});

test("both sources unable and nothing cached: provider A's 429 with Retry-After", async (t) => {
  const { get, sandbox } = await startApp(t, { env: ONE_CALL });
  await get(`${QUOTE}?symbol=IBM`);
  sandbox.yahoo.failSymbol('AAPL', 429);
  const res = await get(`${QUOTE}?symbol=AAPL`);
  assert.equal(res.status, 429);
  assert.equal(res.body.error.code, 'QUOTA_EXHAUSTED');
  assert.ok(Number(res.headers['retry-after']) > 0);
});

test('QUOTE_FALLBACK=none and unmappable symbols behave as without a fallback', async (t) => {
  for (const [env, symbol] of [
    [{ QUOTE_FALLBACK: 'none', ALPHA_VANTAGE_CALLS_PER_DAY: '1' }, 'AAPL'],
    [ONE_CALL, 'ABC.XYZ'],
  ] as const) {
    const { get, sandbox } = await startApp(t, { env });
    await get(`${QUOTE}?symbol=IBM`);
    const res = await get(`${QUOTE}?symbol=${symbol}`);
    assert.equal(res.status, 429, `${symbol}: ${res.text}`);
    assert.equal(sandbox.yahoo.count(), 0);
  }
});

test('live mode without a provider-A key: Yahoo answers with the fallback, 503 without it', async (t) => {
  for (const [fallback, status] of [
    ['yahoo', 200],
    ['none', 503],
  ] as const) {
    const { get } = await startApp(t, {
      env: { QUOTE_FALLBACK: fallback, DATA_MODE: 'live' },
      configure: (c) => ({ ...c, alphaVantage: { ...c.alphaVantage, apiKey: undefined } }),
    });
    const res = await get(`${QUOTE}?symbol=IBM`);
    assert.equal(res.status, status, res.text);
    if (status === 200) assert.equal(res.headers['x-data-source'], 'yahoo');
  }
});
