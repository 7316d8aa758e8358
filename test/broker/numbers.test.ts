import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeFrom, roundTo, toNumber, toText } from '../../src/broker/numbers.js';
import { canonicalStockSymbol } from '../../src/broker/symbols.js';

test('toNumber reads numbers, decimal strings, thousands separators, suffixes and percents', () => {
  assert.equal(toNumber(44), 44);
  assert.equal(toNumber('168.42'), 168.42);
  assert.equal(toNumber('1,300'), 1300);
  assert.equal(toNumber('1,234,567'), 1_234_567);
  assert.equal(toNumber('50.2M'), 50_200_000);
  assert.equal(toNumber('71.4K'), 71_400);
  assert.equal(toNumber('1.5B'), 1_500_000_000);
  assert.equal(toNumber('-0.66'), -0.66);
  assert.equal(toNumber('+3.50'), 3.5);
  assert.equal(toNumber('-5.20%'), -5.2);
  assert.equal(toNumber(' 12 '), 12);
});

test('toNumber gives null for what holds no number', () => {
  for (const raw of [null, undefined, '', 'N/A', 'abc', '12abc', NaN, Infinity, {}, [], true, 'C168.42'])
    assert.equal(toNumber(raw), null, String(raw));
});

test('changeFrom computes change and percent, and nulls when a side is unknown', () => {
  assert.deepEqual(changeFrom(172.1, 171.48), { change: 0.62, changePercent: 0.3616 });
  assert.deepEqual(changeFrom(null, 171.48), { change: null, changePercent: null });
  assert.deepEqual(changeFrom(5, 0), { change: 5, changePercent: null });
  assert.equal(roundTo(-0.00001, 2), 0);
  assert.equal(Object.is(roundTo(-0.00001, 2), -0), false);
});

test('toText trims and treats blank as null; share classes become dotted', () => {
  assert.equal(toText('  x '), 'x');
  assert.equal(toText('   '), null);
  assert.equal(toText(5), '5');
  assert.equal(canonicalStockSymbol('BRK B'), 'BRK.B');
  assert.equal(canonicalStockSymbol('brk/b'), 'BRK.B');
  assert.equal(canonicalStockSymbol('SPY'), 'SPY');
});
