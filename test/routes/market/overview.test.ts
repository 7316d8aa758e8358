import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { DEFAULT_OVERVIEW_SYMBOLS } from '../../../src/core/config-schema.js';
import { MarketOverview } from '../../../src/services/market-overview.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { HttpClient } from '../../../src/upstreams/http-client.js';
import { BROWSER_USER_AGENT, YahooChartSource } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const TWO = /^-?\d+\.\d{2}$/;
const CATEGORY: Record<string, string> = {
  '^GSPC': 'index',
  '^DJI': 'index',
  '^IXIC': 'index',
  '^RUT': 'index',
  '^VIX': 'index',
  'GC=F': 'commodity',
  'SI=F': 'commodity',
  'CL=F': 'commodity',
  'BTC-USD': 'crypto',
  'ETH-USD': 'crypto',
};

describe('GET /api/market/overview', () => {
  it('covers the default instruments in the documented formats, against the previous daily close', async (t) => {
    const running = await startApp(t, { env: ANSWERS_ENV });
    const res = await running.get('/api/market/overview');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-cache'], 'MISS');
    assert.equal(res.headers['x-partial'], undefined);
    assert.deepEqual(Object.keys(res.body), DEFAULT_OVERVIEW_SYMBOLS);
    for (const [symbol, entry] of Object.entries<Record<string, string>>(res.body)) {
      assert.match(entry.price as string, TWO, symbol);
      assert.match(entry.change as string, TWO, symbol);
      assert.match(entry.changePercent as string, /^-?\d+\.\d{2}%$/, symbol);
      assert.equal(entry.category, CATEGORY[symbol], symbol);
      assert.equal(entry.currency, 'USD');
      assert.equal(typeof entry.name, 'string');
      assert.equal(new Date(entry.asOf as string).toISOString(), entry.asOf);
    }
    assert.equal(res.body['^GSPC'].name, 'S&P 500');
    assert.ok(!res.text.includes(new URL(running.sandbox.yahoo.origin).host));

    // The same figures straight from the chart server.
    const chart = await request(`${running.sandbox.yahoo.origin}${chartPath('^VIX')}?range=1d&interval=1d`, {
      headers: { 'user-agent': BROWSER_USER_AGENT },
    });
    const meta = ((await chart.body.json()) as any).chart.result[0].meta;
    // A one-day daily chart names the previous session's close chartPreviousClose (real ones carry no previousClose).
    assert.equal(meta.previousClose, undefined);
    const change = meta.regularMarketPrice - meta.chartPreviousClose;
    assert.equal(res.body['^VIX'].price, meta.regularMarketPrice.toFixed(2));
    assert.equal(res.body['^VIX'].change, change.toFixed(2).replace(/^-0\.00$/, '0.00'));
    assert.equal(res.body['^VIX'].changePercent, `${((change / meta.chartPreviousClose) * 100).toFixed(2).replace(/^-0\.00$/, '0.00')}%`);
    assert.equal(res.body['^VIX'].asOf, new Date(meta.regularMarketTime * 1000).toISOString());
  });

  it('costs no upstream call when warm', async (t) => {
    const running = await startApp(t, { env: ANSWERS_ENV });
    const cold = await running.get('/api/market/overview');
    assert.equal(running.sandbox.yahoo.count(), 10);
    const warm = await running.get('/api/market/overview');
    assert.equal(warm.headers['x-cache'], 'HIT');
    assert.equal(warm.text, cold.text);
    const etag = warm.headers.etag as string;
    const notModified = await running.get('/api/market/overview', { 'if-none-match': etag });
    assert.equal(notModified.status, 304);
    assert.equal(running.sandbox.yahoo.count(), 10);
  });

  it('1,000 concurrent requests in one fresh window cost one upstream call per instrument', async (t) => {
    const running = await startApp(t, { env: ANSWERS_ENV });
    running.sandbox.yahoo.setFaults({ latencyMs: 40 });
    const agent = new Agent({ connections: 1000 });
    t.after(() => agent.close());
    const responses = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const res = await request(`${running.url}/api/market/overview`, { dispatcher: agent });
        return { status: res.statusCode, text: await res.body.text() };
      }),
    );
    assert.ok(responses.every((r) => r.status === 200));
    assert.equal(new Set(responses.map((r) => r.text)).size, 1);
    for (const symbol of DEFAULT_OVERVIEW_SYMBOLS) assert.equal(running.sandbox.yahoo.count(chartPath(symbol)), 1, symbol);
    assert.equal(running.sandbox.yahoo.count(), DEFAULT_OVERVIEW_SYMBOLS.length);
  });

  it('leaves out a failing instrument and names it in X-Partial', async (t) => {
    const running = await startApp(t, { env: { ...ANSWERS_ENV, OVERVIEW_SYMBOLS: '^GSPC,GC=F,BTC-USD,NOPE' } });
    running.sandbox.yahoo.failSymbol('GC=F', 500);
    const res = await running.get('/api/market/overview');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['^GSPC', 'BTC-USD']);
    assert.equal(res.headers['x-partial'], 'GC=F,NOPE');
    // The partial answer is cached with its header.
    const again = await running.get('/api/market/overview');
    assert.equal(again.headers['x-cache'], 'HIT');
    assert.equal(again.headers['x-partial'], 'GC=F,NOPE');
  });

  it('answers one JSON error, uncached, only when no instrument can be served', async (t) => {
    const running = await startApp(t, { env: { ...ANSWERS_ENV, OVERVIEW_SYMBOLS: '^GSPC,GC=F' } });
    running.sandbox.yahoo.failSymbol('^GSPC', 503);
    running.sandbox.yahoo.failSymbol('GC=F', 404);
    const res = await running.get('/api/market/overview');
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'UPSTREAM_ERROR');
    assert.match(res.body.error.message, /no instrument of the market overview could be fetched/);
    assert.ok(!res.text.includes(new URL(running.sandbox.yahoo.origin).host));

    running.sandbox.yahoo.clearSymbolFaults();
    const recovered = await running.get('/api/market/overview');
    assert.equal(recovered.status, 200);
    assert.deepEqual(Object.keys(recovered.body), ['^GSPC', 'GC=F']);
  });

  it('says when to retry when the source refused every instrument (429), and backs off', async (t) => {
    const running = await startApp(t, { env: { ...ANSWERS_ENV, OVERVIEW_SYMBOLS: '^GSPC,GC=F' } });
    running.sandbox.yahoo.setFaults({ fault: 'http429', retryAfter: 30 });
    const res = await running.get('/api/market/overview');
    // A refusal for limits, as the quote routes answer one: 429 with the code, not a failure.
    assert.equal(res.status, 429);
    assert.equal(res.body.error.code, 'QUOTA_EXHAUSTED');
    assert.equal(res.headers['retry-after'], '30');
    running.sandbox.yahoo.clearFaults();
    const during = await running.get('/api/market/overview');
    assert.equal(during.status, 429, 'still backing off');
    assert.equal(running.sandbox.yahoo.count(), 2, 'nothing sent while backing off');
  });
});

describe('MarketOverview instruments', () => {
  it('serve a stale instrument when its refresh fails, but refresh it when it can', async (t) => {
    const running = await startApp(t, { env: ANSWERS_ENV });
    const { cache, health, logger } = running.app.deps;
    const http = new HttpClient({ name: 'Yahoo', timeoutMs: 2_000, logger });
    const source = new YahooChartSource({
      url: running.sandbox.yahoo.origin,
      http,
      budget: running.app.deps.budgets.get('yahoo-test', { perMinute: 0, perDay: 0, minIntervalMs: 0 }),
    });
    t.after(() => source.close());
    const overview = new MarketOverview({
      source,
      scope: running.app.deps.scopes.of(source.name),
      symbols: ['^GSPC', 'ETH-USD'],
      concurrency: 2,
      window: { freshMs: 0, staleMs: 60_000 },
      cache,
      health,
      logger,
    });
    const first = await overview.collect();
    assert.deepEqual(first.missing, []);
    assert.equal(running.sandbox.yahoo.count(), 2);

    // Not fresh any more: both are asked again, and the failing one is served from its stale value.
    running.sandbox.yahoo.failSymbol('^GSPC', 500);
    const second = await overview.collect();
    assert.deepEqual(second.missing, []);
    assert.deepEqual(second.quotes['^GSPC'], first.quotes['^GSPC']);
    assert.equal(running.sandbox.yahoo.count(), 4);
  });
});
