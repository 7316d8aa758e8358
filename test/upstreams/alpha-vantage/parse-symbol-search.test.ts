import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiError, driftOf } from '../../../src/core/errors.js';
import { classifyAlphaVantageBody } from '../../../src/upstreams/alpha-vantage/classify-body.js';
import { parseSymbolSearch } from '../../../src/upstreams/alpha-vantage/parse-symbol-search.js';
import { MATCH_FIELDS } from '../../../src/wire/alpha-vantage/bodies.js';
import { fixture } from '../../helpers/fixtures.js';

const upstreamError = (e: ApiError) => e.code === 'UPSTREAM_ERROR';

test('matches keep the nine upstream fields as sent, in order', () => {
  const body = parseSymbolSearch(fixture('alpha-vantage', 'symbol-search-tesco.json'));
  assert.equal(body.bestMatches.length, 3);
  assert.deepEqual(body.bestMatches[0], fixture('alpha-vantage', 'symbol-search-tesco.json').bestMatches[0]);
  assert.deepEqual(Object.keys(body.bestMatches[0]!), [...MATCH_FIELDS]);
});

test('no match is an empty list, not an error', () => {
  assert.deepEqual(parseSymbolSearch(fixture('alpha-vantage', 'symbol-search-empty.json')), { bestMatches: [] });
});

test('ugly matches: foreign listings, accents, padding and a zero score pass; an unknown extra field is dropped', () => {
  const body = parseSymbolSearch(fixture('alpha-vantage', 'symbol-search-ugly.json'));
  assert.deepEqual(
    body.bestMatches.map((m) => m['1. symbol']),
    ['BMW.DEX', '600104.SHH', 'NESN.SWI'],
  );
  assert.equal(body.bestMatches[0]!['2. name'], 'Bayerische Motoren Werke AG  ');
  assert.equal(body.bestMatches[2]!['2. name'], 'Nestlé S.A.');
  assert.equal('10. isin' in body.bestMatches[0]!, false);
});

test('a match without a field, a malformed score or no bestMatches at all is an upstream error', () => {
  assert.throws(() => parseSymbolSearch(fixture('alpha-vantage', 'symbol-search-missing-field.json')), upstreamError);
  const tesco = fixture('alpha-vantage', 'symbol-search-tesco.json');
  tesco.bestMatches[1]['9. matchScore'] = 'high';
  assert.throws(() => parseSymbolSearch(tesco), upstreamError);
  assert.throws(() => parseSymbolSearch({ bestMatches: [null] }), upstreamError);
  assert.throws(() => parseSymbolSearch({ matches: [] }), upstreamError);
});

test('a throttled search is classified as a refusal before parsing', () => {
  const classified = classifyAlphaVantageBody(fixture('alpha-vantage', 'information-burst.json'));
  assert.equal(classified.kind, 'refusal');
});

test('each shape failure is counted under its own reason', () => {
  const reason = (drift: string) => (e: unknown) => driftOf(e) === drift;
  assert.throws(() => parseSymbolSearch(fixture('alpha-vantage', 'symbol-search-missing-field.json')), reason('search-match'));
  assert.throws(() => parseSymbolSearch({ matches: [] }), reason('no-best-matches'));
});
