import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { INDICATORS, indicatorSpec, sectionKey } from '../../../src/wire/alpha-vantage/indicators.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, PREMIUM_PLAN, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit, on a plan that allows every function. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK, ...PREMIUM_PLAN };

const TECH = '/api/provider-a/technical';

test('RSI daily is the default and keeps the upstream shape', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const res = await get(`${TECH}?symbol=IBM`);
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ['Meta Data', 'Technical Analysis: RSI']);
  const rows = Object.entries(res.body['Technical Analysis: RSI']) as [string, { RSI: string }][];
  assert.ok(rows.length > 10);
  for (const [date, row] of rows) {
    assert.match(date, /^\d{4}-\d{2}-\d{2}$/);
    const value = Number(row.RSI);
    assert.ok(value >= 0 && value <= 100, `RSI ${row.RSI}`);
  }
});

test('every catalogued indicator answers with its section and value keys', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  for (const indicator of INDICATORS) {
    const res = await get(`${TECH}?symbol=MSFT&indicator=${indicator.toLowerCase()}&interval=weekly`);
    assert.equal(res.status, 200, `${indicator}: ${res.text.slice(0, 200)}`);
    const section = res.body[sectionKey(indicator)];
    assert.ok(section, `${indicator} has ${sectionKey(indicator)}`);
    const firstRow = Object.values(section)[0] as Record<string, string>;
    assert.deepEqual(Object.keys(firstRow).sort(), [...(indicatorSpec(indicator)?.valueKeys ?? [])].sort(), indicator);
  }
});

test('the upstream gets the required parameters with defaults, and nothing a caller adds', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  await get(`${TECH}?symbol=IBM&indicator=BBANDS&interval=60min&series_type=open&outputsize=full`);
  const [event] = await seen;
  assert.equal(event.query.get('function'), 'BBANDS');
  assert.equal(event.query.get('interval'), '60min');
  assert.equal(event.query.get('time_period'), '20');
  assert.equal(event.query.get('series_type'), 'open');
  assert.equal(event.query.get('outputsize'), null);
});

test('unknown indicators and intervals are 400s that list the allowed values', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const badIndicator = await get(`${TECH}?symbol=IBM&indicator=FOO`);
  assert.equal(badIndicator.status, 400);
  assert.equal(badIndicator.body.error.code, 'INVALID_PARAMETER');
  assert.match(badIndicator.body.error.message, /indicator must be one of: .*RSI.*MACD/);
  const badInterval = await get(`${TECH}?symbol=IBM&interval=2min`);
  assert.equal(badInterval.status, 400);
  assert.match(badInterval.body.error.message, /interval must be one of: 1min, 5min, 15min, 30min, 60min, daily, weekly, monthly/);
});

test('parameters an indicator does not take are ignored and never forwarded, as Alpha Vantage ignores them', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  const res = await get(`${TECH}?symbol=IBM&indicator=STOCH&time_period=10&series_type=close&fastperiod=abc&month=2024-01`);
  assert.equal(res.status, 200, res.text);
  const [event] = await seen;
  for (const name of ['time_period', 'series_type', 'fastperiod', 'month']) assert.equal(event.query.get(name), null, name);
  assert.equal(event.query.get('fastkperiod'), '5');
  const adx = await get(`${TECH}?symbol=IBM&indicator=ADX&series_type=nonsense`);
  assert.equal(adx.status, 200, adx.text);
});

test('optional parameters are validated strictly where they apply, forwarded, and part of the cache key', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  const macd = await get(`${TECH}?symbol=IBM&indicator=MACD&fastperiod=05&slowperiod=35&signalperiod=5&time_period=9`);
  assert.equal(macd.status, 200, macd.text);
  const [event] = await seen;
  assert.deepEqual(
    ['fastperiod', 'slowperiod', 'signalperiod', 'time_period'].map((n) => event.query.get(n)),
    ['5', '35', '5', null],
  );
  assert.equal(macd.body['Meta Data']['5.1: Fast Period'], 5);
  assert.equal(macd.body['Meta Data']['5.2: Slow Period'], 35);
  const defaults = await get(`${TECH}?symbol=IBM&indicator=MACD`);
  const explicitDefaults = await get(`${TECH}?symbol=IBM&indicator=MACD&fastperiod=12&slowperiod=26&signalperiod=9`);
  assert.equal(defaults.headers['x-cache'], 'MISS');
  assert.equal(explicitDefaults.headers['x-cache'], 'HIT');
  const sar = await get(`${TECH}?symbol=IBM&indicator=SAR&acceleration=0.02&maximum=0.2`);
  assert.equal(sar.status, 200, sar.text);
  assert.equal(sar.body['Meta Data']['5.1: Acceleration'], 0.02);

  for (const bad of [
    'indicator=MACD&fastperiod=1e1',
    'indicator=MACD&fastperiod=%2B5',
    'indicator=MACD&slowperiod=0x10',
    'indicator=BBANDS&matype=9',
    'indicator=BBANDS&nbdevup=2e0',
    'indicator=SAR&acceleration=0',
    'indicator=RSI&time_period=abc',
    'indicator=RSI&time_period=14.0',
    'indicator=RSI&time_period=1',
    'indicator=RSI&series_type=median',
    'indicator=RSI&interval=5min&month=2024-13',
    'indicator=ULTOSC&timeperiod1=7&timeperiod1=8',
  ]) {
    const res = await get(`${TECH}?symbol=IBM&${bad}`);
    assert.equal(res.status, 400, bad);
    assert.equal(res.body.error.code, 'INVALID_PARAMETER', bad);
  }
});

test('month selects a month of intraday history and is ignored on daily intervals', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  const res = await get(`${TECH}?symbol=IBM&indicator=SMA&interval=60min&month=2024-03`);
  assert.equal(res.status, 200, res.text);
  assert.equal((await seen)[0].query.get('month'), '2024-03');
  const rows = Object.keys(res.body['Technical Analysis: SMA']);
  assert.ok(rows.length > 0 && rows.every((key) => key.startsWith('2024-03-')), rows[0]);
  assert.match(res.body['Meta Data']['3: Last Refreshed'], /^2024-03-29 /);
});

test('an unknown symbol is 404', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const res = await get(`${TECH}?symbol=ZZZZQX`);
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'SYMBOL_NOT_FOUND');
});
