import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { previousClose, priceAt, round } from '../../../src/sandbox/price-model.js';
import { chartPath, YahooSimulator } from '../../../src/sandbox/yahoo/yahoo-simulator.js';
import { classifyChartResponse } from '../../../src/upstreams/yahoo/parse-chart.js';

const UA = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' };
// Wednesday 2024-05-15 18:00 UTC: US markets open.
const OPEN = Date.UTC(2024, 4, 15, 18, 0, 0);
// Sunday 2024-05-19 12:00 UTC: closed, except crypto.
const SUNDAY = Date.UTC(2024, 4, 19, 12, 0, 0);

async function start(t: TestContext, now: number): Promise<YahooSimulator> {
  const sim = new YahooSimulator({ now: () => now });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

async function chart(sim: YahooSimulator, symbol: string, query = 'range=1d&interval=1d', headers: Record<string, string> = UA) {
  const res = await request(`${sim.origin}${chartPath(symbol)}?${query}`, { headers });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json, text };
}

describe('Yahoo chart simulator', () => {
  it('serves the chart shape with prices from the shared price model', async (t) => {
    const sim = await start(t, OPEN);
    const res = await chart(sim, '^GSPC');
    assert.equal(res.status, 200);
    assert.equal(res.json.chart.error, null);
    const { meta, timestamp, indicators } = res.json.chart.result[0];
    assert.equal(meta.symbol, '^GSPC');
    assert.equal(meta.instrumentType, 'INDEX');
    assert.equal(meta.regularMarketTime, OPEN / 1000);
    assert.equal(meta.regularMarketPrice, round(priceAt('^GSPC', OPEN), 2));
    // As real daily charts: no previousClose; on a one-day range chartPreviousClose is the previous session's close.
    assert.equal(meta.previousClose, undefined);
    assert.equal(meta.chartPreviousClose, round(previousClose('^GSPC', OPEN), 2));
    assert.equal(timestamp.length, 1);
    assert.equal(indicators.quote[0].close[0], meta.regularMarketPrice);
    assert.equal(classifyChartResponse({ status: 200, headers: {}, json: res.json }, '^GSPC').kind, 'data');
  });

  it('keeps the last close and time while the market is shut, but crypto moves on', async (t) => {
    const sim = await start(t, SUNDAY);
    const index = (await chart(sim, '^DJI')).json.chart.result[0].meta;
    assert.equal(index.regularMarketTime, Date.UTC(2024, 4, 17, 21, 0) / 1000, 'Friday close');
    const btc = (await chart(sim, 'BTC-USD')).json.chart.result[0].meta;
    assert.equal(btc.regularMarketTime, SUNDAY / 1000);
    assert.equal(btc.instrumentType, 'CRYPTOCURRENCY');
  });

  it('has intraday bars with the odd null, and quirks for the ugly answers', async (t) => {
    const sim = await start(t, OPEN);
    const intraday = (await chart(sim, '^IXIC', 'range=5d&interval=5m')).json.chart.result[0];
    assert.ok(intraday.indicators.quote[0].close.includes(null));
    assert.equal(intraday.meta.previousClose, round(previousClose('^IXIC', OPEN), 2), 'intraday charts carry previousClose');
    assert.equal(typeof intraday.meta.chartPreviousClose, 'number');

    sim.setQuirks({ omitPreviousClose: true, omitMarketPrice: true, nullLastBar: true });
    const ugly = (await chart(sim, 'CL=F', 'range=1d&interval=15m')).json.chart.result[0];
    assert.equal(ugly.meta.previousClose, undefined);
    assert.equal(ugly.meta.regularMarketPrice, undefined);
    assert.equal(ugly.indicators.quote[0].close.at(-1), null);
    const parsed = classifyChartResponse({ status: 200, headers: {}, json: { chart: { result: [ugly], error: null } } }, 'CL=F');
    assert.equal(parsed.kind, 'data');
  });

  it('answers 404 for unknown symbols, 400 for bad input and 429 without a browser User-Agent', async (t) => {
    const sim = await start(t, OPEN);
    const unknown = await chart(sim, 'NOPE123');
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { chart: { result: null, error: { code: 'Not Found', description: 'No data found, symbol may be delisted' } } });
    const bad = await chart(sim, '^GSPC', 'range=1d&interval=7m');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.chart.error.code, 'Bad Request');
    const bot = await chart(sim, '^GSPC', 'range=1d&interval=1d', { 'user-agent': 'undici' });
    assert.equal(bot.status, 429);
  });

  it('fails one symbol on demand and counts requests per symbol path', async (t) => {
    const sim = await start(t, OPEN);
    sim.failSymbol('gc=f', 500);
    assert.equal((await chart(sim, 'GC=F')).status, 500);
    assert.equal((await chart(sim, 'SI=F')).status, 200);
    sim.clearSymbolFaults();
    assert.equal((await chart(sim, 'GC=F')).status, 200);
    assert.equal(sim.count(chartPath('GC=F')), 2);
    assert.equal(sim.count('/v8/finance/chart/GC%3DF'), 2);
  });
});
