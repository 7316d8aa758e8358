// The Yahoo fallback for technical indicators (TECHNICAL_SOURCE=provider), end to end against the sandbox:
// when provider A cannot answer, the indicator is computed from the stored Yahoo bars of the interval, in
// Alpha Vantage's shape, with X-Data-Source saying so; the values are the shared indicator maths on the
// simulator's chart bars, read back from Yahoo's float32 to the prices the exchange printed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { computeIndicator, type OhlcvBar } from '../../../src/indicators/compute-indicator.js';
import { ROWS } from '../../../src/indicators/technical-body.js';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { INTERVALS } from '../../../src/wire/alpha-vantage/indicators.js';
import { BROWSER_USER_AGENT } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { httpGet, startApp } from '../../helpers/app.js';

const TECH = '/api/provider-a/technical';
const PROVIDER = { QUOTE_FALLBACK: 'yahoo', TECHNICAL_SOURCE: 'provider' };
/** Provider A's day holds one call: the first indicator spends it. */
const ONE_CALL = { ...PROVIDER, ALPHA_VANTAGE_CALLS_PER_DAY: '1' };

test("with provider A spent, RSI comes from Yahoo's daily bars: Alpha Vantage's shape, values from the shared maths", async (t) => {
  const { get, sandbox } = await startApp(t, { env: ONE_CALL });
  const first = await get(`${TECH}?symbol=IBM&indicator=RSI&interval=daily`);
  assert.equal(first.headers['x-data-source'], 'alpha-vantage');

  const asked = once(sandbox.yahoo, 'request') as Promise<[SimRequestEvent]>;
  const res = await get(`${TECH}?symbol=msft&indicator=RSI&interval=daily&time_period=10`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-data-source'], 'yahoo');
  assert.equal(res.headers['x-cache'], 'MISS');
  const [event] = await asked;
  assert.equal(event.path, chartPath('MSFT'));
  assert.equal(event.query.get('interval'), '1d');

  // The same chart, read straight from the simulator; bars without a price are left out, as Yahoo's are.
  const chart = await httpGet(`${sandbox.yahoo.origin}${chartPath('MSFT')}?${event.query}`, { 'user-agent': BROWSER_USER_AGENT });
  const { timestamp, indicators, meta } = chart.body.chart.result[0];
  const q = indicators.quote[0];
  // Yahoo's float32 prices as the exchange printed them, at the chart's priceHint decimals.
  const printed = (v: number | null) => (v === null ? null : Number(v.toFixed(meta.priceHint)));
  const rows = (timestamp as number[])
    .map((time, i) => ({
      time,
      open: printed(q.open[i]),
      high: printed(q.high[i]),
      low: printed(q.low[i]),
      close: printed(q.close[i]),
      volume: q.volume[i] ?? 0,
    }))
    .filter((b) => [b.open, b.high, b.low, b.close].every((v) => v !== null));
  const rsi = computeIndicator('RSI', rows as OhlcvBar[], { interval: 'daily', timePeriod: 10, seriesType: 'close', extra: {} })
    .RSI as number[];
  const day = (time: number) => new Intl.DateTimeFormat('en-CA', { timeZone: meta.exchangeTimezoneName }).format(time * 1000);

  assert.deepEqual(Object.keys(res.body), ['Meta Data', 'Technical Analysis: RSI']);
  const series = Object.entries(res.body['Technical Analysis: RSI'] as Record<string, { RSI: string }>);
  assert.equal(series.length, ROWS.daily);
  assert.deepEqual(res.body['Meta Data'], {
    '1: Symbol': 'MSFT',
    '2: Indicator': 'Relative Strength Index (RSI)',
    '3: Last Refreshed': day(rows.at(-1)?.time as number),
    '4: Interval': 'daily',
    '5: Time Period': 10,
    '6: Series Type': 'close',
    // RSI spells its zone "US/Eastern Time", as Alpha Vantage does for all but the moving averages (technical-body.ts).
    '7: Time Zone': 'US/Eastern Time',
  });
  // Newest first. The newest bar moves with the price between the two reads; the others are history.
  series.forEach(([key, value], k) => {
    const i = rows.length - 1 - k;
    assert.equal(key, day(rows[i]?.time as number));
    if (k > 0) assert.equal(value.RSI, (rsi[i] as number).toFixed(4), key);
    assert.match(value.RSI, /^\d+\.\d{4}$/);
  });

  const again = await get(`${TECH}?symbol=MSFT&indicator=RSI&interval=daily&time_period=10`);
  assert.equal(again.headers['x-cache'], 'HIT');
  assert.equal(again.headers['x-data-source'], 'yahoo');
  assert.equal(sandbox.yahoo.count(chartPath('MSFT')), 2, 'one call by the service, one by this test');
  const status = await get('/api/system/status');
  assert.deepEqual(status.body.dataSources.technical, { 'alpha-vantage': 1, yahoo: 2 });
});

test("every interval has a Yahoo chart within Yahoo's history limits and enough bars for a full answer", async (t) => {
  const { get } = await startApp(t, {
    env: { ...PROVIDER, DATA_MODE: 'live' },
    configure: (c) => ({ ...c, alphaVantage: { ...c.alphaVantage, apiKey: undefined } }),
  });
  for (const interval of INTERVALS) {
    const res = await get(`${TECH}?symbol=AAPL&indicator=MACD&interval=${interval}`);
    assert.equal(res.status, 200, `${interval}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'yahoo');
    const keys = Object.keys(res.body['Technical Analysis: MACD']);
    assert.equal(keys.length, ROWS[interval], interval);
    assert.match(keys[0] as string, interval.endsWith('min') ? /^\d{4}-\d\d-\d\d \d\d:\d\d$/ : /^\d{4}-\d\d-\d\d$/);
    assert.ok((keys[0] as string) > (keys[1] as string), `${interval}: newest first`);
  }
});

test("QUOTE_FALLBACK=none, or Yahoo unable too: provider A's 429, as without a fallback", async (t) => {
  for (const fallback of ['none', 'yahoo']) {
    const { get, sandbox } = await startApp(t, { env: { ...ONE_CALL, QUOTE_FALLBACK: fallback } });
    await get(`${TECH}?symbol=IBM`);
    if (fallback === 'yahoo') sandbox.yahoo.failSymbol('AAPL', 500);
    const res = await get(`${TECH}?symbol=AAPL`);
    assert.equal(res.status, 429, `${fallback}: ${res.text}`);
    assert.equal(res.body.error.code, 'QUOTA_EXHAUSTED');
    assert.equal(sandbox.yahoo.count(), fallback === 'yahoo' ? 1 : 0);
  }
});

test('/query falls back too; provider A back, its answer is served again (the sources never share a key)', async (t) => {
  const { get, sandbox } = await startApp(t, { env: PROVIDER });
  const url = '/api/provider-a/query?function=SMA&symbol=AAPL&interval=weekly&time_period=10&series_type=close';
  sandbox.alphaVantage.setFaults({ fault: 'http5xx' });
  const fallback = await get(url);
  assert.equal(fallback.status, 200, fallback.text);
  assert.equal(fallback.headers['x-data-source'], 'yahoo');
  assert.equal(fallback.body['Meta Data']['4: Interval'], 'weekly');

  sandbox.alphaVantage.clearFaults();
  const primary = await get(url);
  assert.equal(primary.headers['x-data-source'], 'alpha-vantage');
  assert.equal(primary.headers['x-cache'], 'MISS');
});

test("the simulator keeps Yahoo's intraday history limits: 1m beyond 7 days and 5m beyond 60 are refused", async (t) => {
  const { sandbox } = await startApp(t);
  for (const [range, interval] of [
    ['1mo', '1m'],
    ['3mo', '5m'],
  ]) {
    const res = await httpGet(`${sandbox.yahoo.origin}${chartPath('AAPL')}?range=${range}&interval=${interval}`, {
      'user-agent': BROWSER_USER_AGENT,
    });
    assert.equal(res.status, 422, `${interval} over ${range}`);
    assert.equal(res.body.chart.error.code, 'Unprocessable Entity');
  }
});
