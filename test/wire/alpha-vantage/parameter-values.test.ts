// A drop-in parameter's value as Alpha Vantage reads it: the one text rule, then the letter case the value is
// documented in, only where the provider reads it in any case or documents one case alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApiError } from '../../../src/core/errors.js';
import { given } from '../../../src/wire/alpha-vantage/parameter-values.js';

test('symbols, currencies and tickers are upper case; intervals, series types and output sizes lower case', () => {
  for (const [name, raw, read] of [
    ['symbol', ' ibm ', 'IBM'],
    ['from_currency', 'usd', 'USD'],
    ['market', 'Eur', 'EUR'],
    ['tickers', 'ibm,aapl', 'IBM,AAPL'],
    ['SYMBOLS', 'msft,ibm', 'MSFT,IBM'],
    ['interval', 'MONTHLY ', 'monthly'],
    ['interval', 'Annual', 'annual'],
    ['series_type', 'Close', 'close'],
    ['outputsize', 'FULL', 'full'],
  ] as const) {
    assert.equal(given(raw, name), read, `${name}=${JSON.stringify(raw)}`);
  }
});

test('free text and values documented in mixed case keep the caller’s case, trimmed', () => {
  assert.equal(given(' technology ', 'topics'), 'technology');
  assert.equal(given('Bank of', 'keywords'), 'Bank of', 'matched in any case upstream: the cache key folds it, not the value');
  assert.equal(given('DAILY', 'INTERVAL'), 'DAILY', 'the analytics functions document DAILY beside 1min');
  assert.equal(given('LATEST', 'sort'), 'LATEST');
  assert.equal(given(undefined, 'symbol'), undefined);
});

test('a refused character, or a value given twice, is INVALID_PARAMETER naming the parameter', () => {
  const invalid = (name: string) => (error: ApiError) => error.code === 'INVALID_PARAMETER' && error.message.startsWith(`${name} `);
  assert.throws(() => given('monthly\u200B', 'interval'), invalid('interval'));
  assert.throws(() => given('\u00A0USD', 'from_currency'), invalid('from_currency'));
  assert.throws(() => given(['IBM', 'MSFT'], 'symbol'), invalid('symbol'));
});
