// The body the simulator and the Yahoo fallback lay out, against bodies recorded from Alpha Vantage: the
// same Meta Data keys in the same order, the same section name, the same row keys and value keys. The
// recorded bodies come without the bars they were computed on, so their values cannot be compared here
// (indicator-cross-check.test.ts compares the values against independent implementations).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IndicatorParams } from '../../src/indicators/indicator-params.js';
import { type KeyedBar, technicalBody } from '../../src/indicators/technical-body.js';
import { fixture } from '../helpers/fixtures.js';

const DEFAULTS = { fastperiod: 12, slowperiod: 26, signalperiod: 9 };

function bars(count: number, key: (i: number) => string): KeyedBar[] {
  return Array.from({ length: count }, (_, i) => {
    const close = 100 + 5 * Math.sin(i / 6) + i / 20;
    return { open: close - 0.3, high: close + 1, low: close - 1, close, volume: 1_000_000 + 1_000 * (i % 7), key: key(i) };
  });
}

const day = (i: number) => new Date(Date.UTC(2023, 0, 2) + i * 86_400_000).toISOString().slice(0, 10);
const fiveMinutes = (i: number) => new Date(Date.UTC(2024, 4, 10, 4) + i * 300_000).toISOString().slice(0, 16).replace('T', ' ');

for (const [name, fn, params, keyOf] of [
  ['rsi-daily', 'RSI', { interval: 'daily', timePeriod: 14, seriesType: 'close', extra: {} }, day],
  ['macd-intraday', 'MACD', { interval: '5min', timePeriod: null, seriesType: 'close', extra: DEFAULTS }, fiveMinutes],
  ['ad-daily', 'AD', { interval: 'daily', timePeriod: null, seriesType: null, extra: {} }, day],
] as const) {
  test(`${fn} is laid out as the recorded ${name} body`, () => {
    const recorded = fixture('alpha-vantage', `${name}.json`) as Record<string, Record<string, Record<string, string> | string | number>>;
    const ours = technicalBody(fn, 'IBM', bars(400, keyOf), params as IndicatorParams) as typeof recorded;
    assert.deepEqual(Object.keys(ours), Object.keys(recorded));
    assert.deepEqual(Object.keys(ours['Meta Data'] ?? {}), Object.keys(recorded['Meta Data'] ?? {}));
    const section = Object.keys(recorded).find((k) => k.startsWith('Technical Analysis')) as string;
    const [recordedKey, recordedRow] = Object.entries(recorded[section] ?? {})[0] as [string, Record<string, string>];
    const [ourKey, ourRow] = Object.entries(ours[section] ?? {})[0] as [string, Record<string, string>];
    assert.equal(ourKey.length, recordedKey.length, `row key ${ourKey} vs ${recordedKey}`);
    assert.deepEqual(Object.keys(ourRow).sort(), Object.keys(recordedRow).sort());
    for (const value of Object.values(ourRow)) assert.match(value, /^-?\d+\.\d{4}$/);
    const keys = Object.keys(ours[section] ?? {});
    assert.deepEqual(keys, [...keys].sort().reverse(), 'rows newest first');
  });
}
