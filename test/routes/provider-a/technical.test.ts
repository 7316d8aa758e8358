import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { INDICATORS, indicatorSpec, sectionKey } from '../../../src/upstreams/alpha-vantage/indicators.js';
import { startApp } from '../../helpers/app.js';

const TECH = '/api/provider-a/technical';

test('RSI daily is the default and keeps the upstream shape', async (t) => {
  const { get } = await startApp(t);
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
  const { get } = await startApp(t);
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
  const { get, sandbox } = await startApp(t);
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
  const { get } = await startApp(t);
  const badIndicator = await get(`${TECH}?symbol=IBM&indicator=FOO`);
  assert.equal(badIndicator.status, 400);
  assert.equal(badIndicator.body.error.code, 'INVALID_PARAMETER');
  assert.match(badIndicator.body.error.message, /indicator must be one of: .*RSI.*MACD/);
  const badInterval = await get(`${TECH}?symbol=IBM&interval=2min`);
  assert.equal(badInterval.status, 400);
  assert.match(badInterval.body.error.message, /interval must be one of: 1min, 5min, 15min, 30min, 60min, daily, weekly, monthly/);
});

test('time_period and series_type are refused where the indicator takes none', async (t) => {
  const { get } = await startApp(t);
  const res = await get(`${TECH}?symbol=IBM&indicator=STOCH&time_period=10`);
  assert.equal(res.status, 400);
  assert.match(res.body.error.message, /time_period does not apply to STOCH/);
  const series = await get(`${TECH}?symbol=IBM&indicator=ADX&series_type=close`);
  assert.equal(series.status, 400);
  const bad = await get(`${TECH}?symbol=IBM&time_period=abc`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'INVALID_PARAMETER');
});

test('an unknown symbol is 404', async (t) => {
  const { get } = await startApp(t);
  const res = await get(`${TECH}?symbol=ZZZZQX`);
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'SYMBOL_NOT_FOUND');
});
