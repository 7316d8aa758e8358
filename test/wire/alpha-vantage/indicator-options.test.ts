import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApiError } from '../../../src/core/errors.js';
import { readIndicatorOptions } from '../../../src/wire/alpha-vantage/indicator-options.js';
import { INDICATORS, indicatorParams, indicatorSpec } from '../../../src/wire/alpha-vantage/indicators.js';

const invalid = (name: string) => (e: ApiError) => e.code === 'INVALID_PARAMETER' && e.message.startsWith(name);

test('every indicator gets exactly the parameters it takes, with defaults', () => {
  for (const fn of INDICATORS) {
    const spec = indicatorSpec(fn)!;
    const options = readIndicatorOptions(fn, 'daily', {});
    assert.equal(options.timePeriod, spec.timePeriod ?? undefined, fn);
    assert.equal(options.seriesType, spec.seriesType ? 'close' : undefined, fn);
    assert.deepEqual(
      Object.keys(options.extra),
      indicatorParams(fn).map((p) => p.name),
      fn,
    );
    assert.deepEqual(options.extra, spec.extra ?? {}, fn);
  }
});

test('the uniform parameter set a front-end sends is accepted for every indicator, what does not apply dropped', () => {
  const uniform = { time_period: '14', series_type: 'close', fastperiod: '12', month: '2024-01', matype: '1' };
  const stoch = readIndicatorOptions('STOCH', 'daily', uniform);
  assert.deepEqual(stoch, { extra: { fastkperiod: '5', slowkperiod: '3', slowkmatype: '0', slowdperiod: '3', slowdmatype: '0' } });
  const bbands = readIndicatorOptions('BBANDS', '5min', uniform);
  assert.deepEqual(bbands, { timePeriod: 14, seriesType: 'close', extra: { nbdevup: '2', nbdevdn: '2', matype: '1' }, month: '2024-01' });
});

test('values are read strictly and spelled one way', () => {
  assert.deepEqual(readIndicatorOptions('MACD', 'daily', { fastperiod: '007', signalperiod: ' 9 ' }).extra, {
    fastperiod: '7',
    slowperiod: '26',
    signalperiod: '9',
  });
  assert.deepEqual(readIndicatorOptions('SAR', 'daily', { acceleration: '0.020', maximum: '0.20' }).extra, {
    acceleration: '0.02',
    maximum: '0.2',
  });
  for (const [fn, raw, name] of [
    ['MACD', { fastperiod: '1e1' }, 'fastperiod'],
    ['MACD', { fastperiod: '0' }, 'fastperiod'],
    ['MACD', { slowperiod: '1001' }, 'slowperiod'],
    ['MACD', { signalperiod: '-3' }, 'signalperiod'],
    ['STOCH', { slowkmatype: '9' }, 'slowkmatype'],
    ['BBANDS', { nbdevup: 'Infinity' }, 'nbdevup'],
    ['BBANDS', { nbdevdn: '0x2' }, 'nbdevdn'],
    ['SAR', { maximum: '-0.2' }, 'maximum'],
    ['RSI', { time_period: '14.5' }, 'time_period'],
    ['RSI', { time_period: '' }, 'time_period'],
    ['RSI', { time_period: '\u00A014' }, 'time_period'],
    ['MACD', { signalperiod: '9\u200B' }, 'signalperiod'],
    ['RSI', { series_type: 'median' }, 'series_type'],
    ['RSI', { series_type: 'close\u0000' }, 'series_type'],
    ['RSI', { time_period: ['14', '15'] }, 'time_period'],
  ] as const) {
    assert.throws(() => readIndicatorOptions(fn, 'daily', raw), invalid(name), `${fn} ${JSON.stringify(raw)}`);
  }
  assert.throws(() => readIndicatorOptions('RSI', '60min', { month: '1999-12' }), invalid('month'));
  assert.throws(() => readIndicatorOptions('RSI', '60min', { month: '2024-1' }), invalid('month'));
  assert.equal(readIndicatorOptions('RSI', 'daily', { month: 'garbage' }).month, undefined, 'month does not apply to daily');
});
