import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/core/errors.js';
import { parseSecdefSearch, pickListing } from '../../../src/upstreams/ibkr/parse-secdef.js';
import { fixture } from '../../helpers/fixtures.js';

test('several listings: string conids read, the US stock line preferred over a foreign one listed first', () => {
  const listings = parseSecdefSearch(fixture('ibkr', 'secdef-aapl.json'));
  assert.equal(listings.length, 3, 'the row without a conid is skipped');
  assert.deepEqual(listings[1], { conid: 265598, symbol: 'AAPL', name: 'APPLE INC', exchange: 'NASDAQ', secTypes: ['STK', 'OPT', 'WAR'] });
  assert.equal(pickListing(listings, 'AAPL')?.conid, 265598);
  assert.equal(pickListing(listings.slice(0, 1), 'AAPL')?.conid, 38708077, 'a foreign line when it is the only stock line');
});

test('fuzzy matches never count; an index is taken when no stock has the symbol', () => {
  const listings = parseSecdefSearch(fixture('ibkr', 'secdef-spx.json'));
  assert.equal(pickListing(listings, 'SPX')?.conid, 416904);
  assert.equal(pickListing(listings, 'SPXX'), undefined);
  assert.equal(pickListing(parseSecdefSearch(fixture('ibkr', 'secdef-aapl.json')), 'AAPL1')?.conid, 493546048);
});

test('share classes match across spellings', () => {
  const listings = parseSecdefSearch([{ conid: '72063691', symbol: 'BRK B', description: 'NYSE', sections: [{ secType: 'STK' }] }]);
  assert.equal(pickListing(listings, 'BRK.B')?.conid, 72063691);
});

test('an empty list is no listing; any other shape is drift ("No symbol found" is a refusal, read by classify-response)', () => {
  assert.deepEqual(parseSecdefSearch([]), []);
  assert.throws(() => parseSecdefSearch(fixture('ibkr', 'secdef-no-symbol.json')), { name: 'UnreadableAnswerError', drift: 'secdef' });
  assert.throws(() => parseSecdefSearch({ error: 'something else' }), ApiError);
});
