import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiError, driftOf } from '../../../src/core/errors.js';
import { technicalParams } from '../../../src/upstreams/alpha-vantage/alpha-vantage-client.js';
import { parseTechnical } from '../../../src/upstreams/alpha-vantage/parse-technical.js';
import { fixture } from '../../helpers/fixtures.js';

test('RSI keeps the upstream shape, numeric time period included', () => {
  const body = parseTechnical(fixture('alpha-vantage', 'rsi-daily.json'), 'RSI');
  assert.equal(body['Meta Data']['5: Time Period'], 14);
  assert.deepEqual(body['Technical Analysis: RSI']?.['2024-05-10'], { RSI: '61.2345' });
});

test('intraday MACD rows with three values are accepted', () => {
  const body = parseTechnical(fixture('alpha-vantage', 'macd-intraday.json'), 'MACD');
  assert.equal(Object.keys(body['Technical Analysis: MACD'] ?? {}).length, 2);
});

test('AD lives under its own section name', () => {
  const body = parseTechnical(fixture('alpha-vantage', 'ad-daily.json'), 'AD');
  assert.ok(body['Technical Analysis: Chaikin A/D']);
  assert.throws(
    () => parseTechnical(fixture('alpha-vantage', 'ad-daily.json'), 'ADX'),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR',
  );
});

test('a row that is not a decimal is an upstream error', () => {
  assert.throws(
    () => parseTechnical(fixture('alpha-vantage', 'rsi-malformed-row.json'), 'RSI'),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR',
  );
});

test('a body without Meta Data is an upstream error', () => {
  assert.throws(
    () => parseTechnical({ 'Technical Analysis: RSI': {} }, 'RSI'),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR',
  );
});

test('the upstream parameters carry the required defaults and nothing else', () => {
  assert.deepEqual(technicalParams({ symbol: 'IBM', indicator: 'RSI', interval: 'daily' }), {
    function: 'RSI',
    symbol: 'IBM',
    interval: 'daily',
    time_period: '14',
    series_type: 'close',
  });
  assert.equal(technicalParams({ symbol: 'IBM', indicator: 'BBANDS', interval: 'weekly' }).time_period, '20');
  const stoch = technicalParams({ symbol: 'IBM', indicator: 'STOCH', interval: '5min' });
  assert.equal(stoch.time_period, undefined);
  assert.equal(stoch.series_type, undefined);
  assert.equal(stoch.fastkperiod, '5');
});

test('each shape failure is counted under its own reason', () => {
  const reason = (drift: string) => (e: unknown) => driftOf(e) === drift;
  assert.throws(() => parseTechnical(fixture('alpha-vantage', 'rsi-malformed-row.json'), 'RSI'), reason('technical-row'));
  assert.throws(() => parseTechnical({ 'Technical Analysis: RSI': {} }, 'RSI'), reason('technical-meta'));
  assert.throws(() => parseTechnical(fixture('alpha-vantage', 'ad-daily.json'), 'ADX'), reason('no-technical-series'));
});
