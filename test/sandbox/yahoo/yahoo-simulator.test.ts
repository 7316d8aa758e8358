import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { priceAt } from '../../../src/sandbox/price-model.js';
import { cents } from '../../../src/sandbox/session-bars.js';
import { YahooSimulator } from '../../../src/sandbox/yahoo/yahoo-simulator.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { classifyChartResponse } from '../../../src/upstreams/yahoo/parse-chart.js';

const UA = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' };
// Wednesday 2024-05-15 18:00 UTC: US markets open (14:00 in New York, daylight time: sessions 13:30 to 20:00 UTC).
const OPEN = Date.UTC(2024, 4, 15, 18, 0, 0);
/** Tuesday's close, 16:00 in New York. */
const TUESDAY_CLOSE = Date.UTC(2024, 4, 14, 20, 0, 0);
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
    assert.equal(meta.regularMarketPrice, cents(priceAt('^GSPC', OPEN)));
    // As real daily charts: no previousClose; on a one-day range chartPreviousClose is the previous session's close.
    assert.equal(meta.previousClose, undefined);
    assert.equal(meta.chartPreviousClose, cents(priceAt('^GSPC', TUESDAY_CLOSE)));
    assert.equal(timestamp.length, 1);
    assert.equal(timestamp[0], Date.UTC(2024, 4, 15, 13, 30) / 1000, "the day's bar is stamped with the session's opening");
    // Bar prices are float32, as Yahoo sends them (recorded 282.2799987792969 for 282.28); meta prices are not.
    assert.equal(indicators.quote[0].close[0], Math.fround(meta.regularMarketPrice));
    assert.notEqual(indicators.quote[0].close[0], meta.regularMarketPrice);
    assert.equal(classifyChartResponse({ status: 200, headers: {}, json: res.json }, '^GSPC').kind, 'data');
  });

  it('keeps the last close and time while the market is shut, but crypto moves on', async (t) => {
    const sim = await start(t, SUNDAY);
    const index = (await chart(sim, '^DJI')).json.chart.result[0].meta;
    assert.equal(index.regularMarketTime, Date.UTC(2024, 4, 17, 20, 0) / 1000, 'Friday close, 16:00 in New York');
    const btc = (await chart(sim, 'BTC-USD')).json.chart.result[0].meta;
    assert.equal(btc.regularMarketTime, SUNDAY / 1000);
    assert.equal(btc.instrumentType, 'CRYPTOCURRENCY');
  });

  it('has intraday bars with the odd null, and quirks for the ugly answers', async (t) => {
    const sim = await start(t, OPEN);
    const intraday = (await chart(sim, '^IXIC', 'range=5d&interval=5m')).json.chart.result[0];
    assert.ok(intraday.indicators.quote[0].close.includes(null));
    assert.equal(intraday.meta.previousClose, cents(priceAt('^IXIC', TUESDAY_CLOSE)), 'intraday charts carry previousClose');
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
    assert.deepEqual(unknown.json, {
      chart: { result: null, error: { code: 'Not Found', description: 'No data found, symbol may be delisted' } },
    });
    const bad = await chart(sim, '^GSPC', 'range=1d&interval=7m');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.chart.error.code, 'Bad Request');
    const bot = await chart(sim, '^GSPC', 'range=1d&interval=1d', { 'user-agent': 'undici' });
    assert.equal(bot.status, 429);
  });

  it('answers dated charts (period1/period2): range "", bars inside the window, chartPreviousClose the close before it', async (t) => {
    const sim = await start(t, OPEN);
    // Monday 2024-05-06 00:00 UTC to Wednesday 2024-05-08 00:00 UTC: two US sessions (Monday, Tuesday).
    const [from, to] = [Date.UTC(2024, 4, 6) / 1000, Date.UTC(2024, 4, 8) / 1000];
    const res = await chart(sim, 'MSFT', `interval=1d&period1=${from}&period2=${to}`);
    assert.equal(res.status, 200);
    const { meta, timestamp, indicators } = res.json.chart.result[0];
    assert.equal(meta.range, '');
    assert.deepEqual(timestamp, [Date.UTC(2024, 4, 6, 13, 30) / 1000, Date.UTC(2024, 4, 7, 13, 30) / 1000]);
    assert.equal(meta.chartPreviousClose, cents(priceAt('MSFT', Date.UTC(2024, 4, 3, 20, 0))), "the close before the window: Friday's");
    assert.equal(meta.regularMarketTime, OPEN / 1000, 'meta describes today, not the window');
    // A daily chart carries adjusted closes (no splits or dividends in the price model: the closes).
    assert.deepEqual(indicators.adjclose, [{ adjclose: indicators.quote[0].close }]);
    assert.equal(meta.previousClose, undefined);
    assert.equal(meta.scale, undefined);
    // The window's last bar is history: not moved to today's price.
    assert.notEqual(indicators.quote[0].close.at(-1), meta.regularMarketPrice);
    const parsed = classifyChartResponse({ status: 200, headers: {}, json: res.json }, 'MSFT', '');
    assert.equal(
      parsed.kind === 'error' && parsed.error.message,
      'Yahoo sent no previous close for MSFT',
      'a dated chart offers no previous close',
    );
  });

  it("a window without sessions has no timestamp and empty quote/adjclose objects; intraday history stops at Yahoo's limits", async (t) => {
    const sim = await start(t, OPEN);
    const [sat, sun] = [Date.UTC(2024, 4, 11) / 1000, Date.UTC(2024, 4, 12) / 1000];
    const daily = (await chart(sim, 'MSFT', `interval=1d&period1=${sat}&period2=${sun}`)).json.chart.result[0];
    assert.equal('timestamp' in daily, false);
    assert.deepEqual(daily.indicators, { quote: [{}], adjclose: [{}] });
    const minute = (await chart(sim, 'MSFT', `interval=1m&period1=${sat}&period2=${sun}`)).json.chart.result[0];
    assert.deepEqual(minute.indicators, { quote: [{}] });
    assert.equal(minute.meta.tradingPeriods, undefined, 'no bars, no trading periods');
    assert.equal(minute.meta.scale, 3);
    const old = await chart(sim, 'MSFT', `interval=1m&period1=${sat - 40 * 86_400}&period2=${sun - 40 * 86_400}`);
    assert.equal(old.status, 422);
    assert.match(old.json.chart.error.description, /within the last 30 days/);
    assert.equal(
      (await chart(sim, 'MSFT', `interval=1m&period1=${sat - 9 * 86_400}&period2=${sun}`)).status,
      422,
      'more than 7 days of 1m',
    );
    assert.equal((await chart(sim, 'MSFT', 'interval=1d&period1=yesterday')).status, 400);
  });

  it('intraday charts with bars carry tradingPeriods, one list per session day; every chart its current trading period', async (t) => {
    const sim = await start(t, OPEN);
    const { meta, timestamp } = (await chart(sim, '^GSPC', 'range=5d&interval=15m')).json.chart.result[0];
    const days = new Set(timestamp.map((s: number) => new Date(s * 1000).toISOString().slice(0, 10)));
    assert.equal(meta.tradingPeriods.length, days.size);
    for (const [p] of meta.tradingPeriods) assert.equal(p.end - p.start, 6.5 * 3600);
    const { regular } = meta.currentTradingPeriod;
    assert.deepEqual([regular.start, regular.end], [Date.UTC(2024, 4, 15, 13, 30) / 1000, Date.UTC(2024, 4, 15, 20) / 1000]);
    assert.deepEqual([meta.timezone, meta.gmtoffset, regular.timezone, regular.gmtoffset], ['EDT', -14_400, 'EDT', -14_400]);
  });

  it("includePrePost=true adds pre- and post-market bars for stocks and ETFs (today's pre-market before the opening too), never for indices", async (t) => {
    // Wednesday 08:15 in New York (daylight time): the pre-market runs, the session has not opened.
    const sim = await start(t, Date.UTC(2024, 4, 15, 12, 15));
    const newYork = (s: number) =>
      new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
        s * 1000,
      );
    const times = async (symbol: string, query: string) =>
      ((await chart(sim, symbol, query)).json.chart.result[0].timestamp as number[]).map(newYork);
    const extended = await times('MSFT', 'range=1d&interval=30m&includePrePost=true');
    assert.deepEqual(extended.slice(0, 2), ['04:00', '04:30']);
    assert.equal(extended.at(-1), '08:00', "today's pre-market so far, its newest bar cut at now");
    const yesterday = await times('MSFT', 'range=5d&interval=60m&includePrePost=true');
    for (const hour of ['04:00', '09:00', '09:30', '15:30', '16:00', '19:00']) assert.ok(yesterday.includes(hour), hour);
    assert.ok(!yesterday.includes('10:00'), '60m bars of the session start at 09:30');
    const regular = await times('MSFT', 'range=5d&interval=30m');
    assert.ok(regular.every((hm) => hm >= '09:30' && hm < '16:00'));
    const index = await times('^GSPC', 'range=5d&interval=30m&includePrePost=true');
    assert.ok(index.every((hm) => hm >= '09:30' && hm < '16:00'));
    const meta = (await chart(sim, 'MSFT', 'range=5d&interval=30m&includePrePost=true')).json.chart.result[0].meta;
    assert.deepEqual(Object.keys(meta.tradingPeriods), ['pre', 'regular', 'post']);
    assert.equal((await chart(sim, '^GSPC', 'range=1d&interval=1d')).json.chart.result[0].meta.hasPrePostMarketData, false);
  });

  it("refuses as Yahoo's edge does: 429 in plain text", async (t) => {
    const sim = await start(t, OPEN);
    const bot = await chart(sim, '^GSPC', 'range=1d&interval=1d', { 'user-agent': 'undici' });
    assert.equal(bot.status, 429);
    assert.equal(bot.text, 'Edge: Too Many Requests');
    assert.match(String(bot.headers['content-type']), /^text\/plain/);
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
