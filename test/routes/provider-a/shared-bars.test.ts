// Bars are a shared, stored resource: one series per symbol and bar size, fetched once over its long range,
// then extended with the recent range rather than fetched again; the Yahoo quote and every computed
// indicator of the symbol read it. Counted at the Yahoo simulator, end to end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { tempDir } from '../../helpers/config.js';
import { startApp } from '../../helpers/app.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';

const TECH = '/api/provider-a/technical';
const DASHBOARD = [
  'indicator=RSI&time_period=14',
  'indicator=MACD',
  'indicator=BBANDS&time_period=20',
  'indicator=SMA&time_period=50',
  'indicator=EMA&time_period=20',
];
/** Live mode without a provider-A key: quotes are Yahoo's, indicators computed (TECHNICAL_SOURCE=auto). */
const YAHOO_ONLY = {
  env: { QUOTE_FALLBACK: 'yahoo', DATA_MODE: 'live' },
  configure: (c: any) => ({ ...c, alphaVantage: { ...c.alphaVantage, apiKey: undefined } }),
};

/** The chart requests the simulator received, as `range interval [prePost]`. */
function charts(sandbox: { yahoo: { on: (e: string, f: (event: SimRequestEvent) => void) => unknown } }): string[] {
  const asked: string[] = [];
  sandbox.yahoo.on('request', (event) => {
    const q = event.query;
    asked.push([event.path.split('/').pop(), q.get('range'), q.get('interval'), q.get('includePrePost') ?? ''].join(' ').trim());
  });
  return asked;
}

test('a quote and five daily indicators of a symbol, at once and again with other parameters, weekly too: one Yahoo call', async (t) => {
  const { get, sandbox } = await startApp(t, YAHOO_ONLY);
  const asked = charts(sandbox);
  const answers = await Promise.all([
    get('/api/provider-a/quote?symbol=MSFT'),
    ...DASHBOARD.map((q) => get(`${TECH}?symbol=MSFT&interval=daily&${q}`)),
  ]);
  for (const res of answers) {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-data-source'], 'yahoo');
  }
  assert.deepEqual(asked, ['MSFT 10y 1d']);
  // Another parameter set, another indicator, weekly bars: the same stored series.
  for (const q of [
    'indicator=RSI&time_period=9&interval=daily',
    'indicator=STOCH&interval=daily',
    'indicator=SMA&time_period=10&interval=weekly',
  ]) {
    const res = await get(`${TECH}?symbol=MSFT&${q}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-cache'], 'HIT', q);
  }
  assert.deepEqual(asked, ['MSFT 10y 1d']);
});

test("after the quote's window, one call for the recent range refreshes what the quote and the daily indicators read", async (t) => {
  const { get, sandbox } = await startApp(t, { ...YAHOO_ONLY, env: { ...YAHOO_ONLY.env, CACHE_QUOTE_FRESH_SECONDS: '0' } });
  const asked = charts(sandbox);
  await get('/api/provider-a/quote?symbol=KO');
  const before = await get(`${TECH}?symbol=KO&indicator=RSI&interval=daily`);
  assert.deepEqual(asked, ['KO 10y 1d']);

  // The quote's window is over at once: the next quote refreshes the series with the current session only.
  const quote = await get('/api/provider-a/quote?symbol=KO');
  assert.equal(quote.headers['x-cache'], 'MISS');
  assert.deepEqual(asked, ['KO 10y 1d', 'KO 1d 1d']);
  const after = await get(`${TECH}?symbol=KO&indicator=RSI&interval=daily`);
  assert.equal(after.headers['x-cache'], 'HIT', 'the daily indicator is within its own window: no call of its own');
  assert.deepEqual(asked, ['KO 10y 1d', 'KO 1d 1d']);
  // It reads the refreshed series: answered from the refresh (Age counts from it), same history.
  assert.ok(Number(after.headers.age) <= Number(before.headers.age));
  const [newest] = Object.keys(after.body['Technical Analysis: RSI']);
  assert.equal(newest, quote.body['Global Quote']['07. latest trading day']);
  assert.equal(Object.keys(after.body['Technical Analysis: RSI']).length, Object.keys(before.body['Technical Analysis: RSI']).length);
});

test('intraday series with the pre- and post-market: 30- and 60-minute indicators read one 30m series', async (t) => {
  const { get, sandbox } = await startApp(t, YAHOO_ONLY);
  const asked = charts(sandbox);
  for (const interval of ['30min', '60min']) {
    const res = await get(`${TECH}?symbol=AAPL&indicator=SMA&time_period=10&interval=${interval}`);
    assert.equal(res.status, 200, res.text);
  }
  assert.deepEqual(asked, ['AAPL 1mo 30m true']);
});

test('the series survives a restart in the embedded store: the next refresh extends it', async (t) => {
  const stateDir = tempDir(t);
  const env = { ...YAHOO_ONLY.env, STATE_DIR: stateDir, CACHE_QUOTE_FRESH_SECONDS: '0' };
  const first = await startApp(t, { ...YAHOO_ONLY, env });
  await first.get('/api/provider-a/quote?symbol=JPM');
  await first.app.close();
  // The same Yahoo (stored state is keyed by the upstream's URL in live mode).
  const second = await startApp(t, {
    env,
    configure: (c) => ({ ...YAHOO_ONLY.configure(c), overview: { ...c.overview, url: first.sandbox.yahoo.origin } }),
  });
  const asked = charts(first.sandbox);
  const res = await second.get('/api/provider-a/quote?symbol=JPM');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, ['JPM 1d 1d']);
});

test('replicas on one Redis share the series: one cold symbol asked of both costs one call', async (t) => {
  const env = { ...YAHOO_ONLY.env, REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) };
  const one = await startApp(t, { ...YAHOO_ONLY, env });
  const two = await startApp(t, {
    env,
    configure: (c) => ({ ...YAHOO_ONLY.configure(c), overview: { ...c.overview, url: one.sandbox.yahoo.origin } }),
  });
  const asked = charts(one.sandbox);
  const answers = await Promise.all(
    [one, two].flatMap((replica) => [
      replica.get('/api/provider-a/quote?symbol=NVDA'),
      replica.get(`${TECH}?symbol=NVDA&indicator=RSI&interval=daily`),
    ]),
  );
  for (const res of answers) assert.equal(res.status, 200, res.text);
  assert.deepEqual(asked, ['NVDA 10y 1d']);
  assert.equal(two.sandbox.yahoo.count(chartPath('NVDA')), 0);
});
