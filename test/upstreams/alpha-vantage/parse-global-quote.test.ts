import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, driftOf } from '../../../src/core/errors.js';
import { parseGlobalQuote } from '../../../src/upstreams/alpha-vantage/parse-global-quote.js';
import { QUOTE_FIELDS } from '../../../src/wire/alpha-vantage/bodies.js';
import { fixture } from '../../helpers/fixtures.js';

test('a recorded quote keeps all ten fields in the documented formats', () => {
  const { 'Global Quote': quote } = parseGlobalQuote(fixture('alpha-vantage', 'global-quote-msft.json'));
  assert.deepEqual(Object.keys(quote), [...QUOTE_FIELDS]);
  assert.equal(quote['05. price'], '112.1300');
  assert.equal(quote['09. change'], '-0.6600');
  assert.equal(quote['10. change percent'], '-0.5852%');
  assert.equal(quote['06. volume'], '29062853');
});

test('numbers with thousands separators and too few decimals are re-rendered', () => {
  const { 'Global Quote': quote } = parseGlobalQuote(fixture('alpha-vantage', 'global-quote-commas.json'));
  assert.equal(quote['05. price'], '614250.1000');
  assert.equal(quote['02. open'], '612100.0000');
  assert.equal(quote['09. change'], '2250.1000');
  assert.equal(quote['06. volume'], '1234');
});

test('an empty Global Quote is an unknown symbol', () => {
  assert.throws(
    () => parseGlobalQuote(fixture('alpha-vantage', 'global-quote-empty.json')),
    (e: ApiError) => e.code === 'SYMBOL_NOT_FOUND',
  );
});

test('a quote missing fields is an upstream error naming the field', () => {
  assert.throws(
    () => parseGlobalQuote(fixture('alpha-vantage', 'global-quote-partial.json')),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR' && e.message.includes('02. open'),
  );
});

test('a body without Global Quote, or with a garbage price, is an upstream error', () => {
  assert.throws(
    () => parseGlobalQuote({ Quote: {} }),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR',
  );
  const body = fixture('alpha-vantage', 'global-quote-msft.json');
  body['Global Quote']['05. price'] = 'N/A';
  assert.throws(
    () => parseGlobalQuote(body),
    (e: ApiError) => e.code === 'UPSTREAM_ERROR' && e.message.includes('05. price'),
  );
});

test('a negative zero change renders without a sign', () => {
  const body = fixture('alpha-vantage', 'global-quote-msft.json');
  body['Global Quote']['09. change'] = '-0.00001';
  body['Global Quote']['10. change percent'] = '-0.00001%';
  const { 'Global Quote': quote } = parseGlobalQuote(body);
  assert.equal(quote['09. change'], '0.0000');
  assert.equal(quote['10. change percent'], '0.0000%');
});

test('each shape failure is counted under its own reason; an empty quote (unknown symbol) is not one', () => {
  const reason = (drift: string) => (e: unknown) => driftOf(e) === drift;
  assert.throws(() => parseGlobalQuote({ Quote: {} }), reason('no-global-quote'));
  const body = fixture('alpha-vantage', 'global-quote-msft.json');
  body['Global Quote']['05. price'] = 'n/a';
  assert.throws(() => parseGlobalQuote(body), reason('quote-field'));
  assert.throws(
    () => parseGlobalQuote(fixture('alpha-vantage', 'global-quote-empty.json')),
    (e: unknown) => e instanceof ApiError && driftOf(e) === undefined,
  );
});
