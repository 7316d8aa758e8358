import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/core/errors.js';
import { parsePositionsPage } from '../../../src/upstreams/ibkr/parse-positions.js';
import { fixture } from '../../helpers/fixtures.js';

test('a positions page: numbers or strings with commas, share classes dotted, options described, broken rows skipped', () => {
  const rows = parsePositionsPage(fixture('ibkr', 'positions-page.json'), 'U1234567', Date.UTC(2026, 3, 28));
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[0], {
    accountId: 'U1234567',
    symbol: 'SPY',
    description: null,
    assetClass: 'stock',
    quantity: 44,
    averageCost: 652.47477275,
    marketPrice: 656.25341795,
    marketValue: 28875.15,
    unrealizedPnl: 166.26,
    currency: 'USD',
    freshness: { kind: 'unknown', asOf: '2026-04-28T00:00:00.000Z' },
  });
  assert.deepEqual(
    { symbol: rows[1]?.symbol, quantity: rows[1]?.quantity, marketValue: rows[1]?.marketValue, averageCost: rows[1]?.averageCost },
    {
      symbol: 'BRK.B',
      quantity: -12,
      marketValue: -4950,
      averageCost: 400.1,
    },
  );
  assert.equal(rows[2]?.assetClass, 'option');
  assert.equal(rows[2]?.averageCost, 12.5, 'per unit, not the multiplied avgCost');
  assert.match(rows[2]?.description ?? '', /JUN2026 200 C/);
  assert.equal(rows[3]?.assetClass, 'forex');
  assert.equal(rows[3]?.averageCost, 1.0711, 'falls back to avgCost when avgPrice is null');
});

test('an empty page ([] or {}) ends the list; anything else is an upstream error', () => {
  assert.deepEqual(parsePositionsPage(fixture('ibkr', 'positions-empty.json'), 'U1', 0), []);
  assert.deepEqual(parsePositionsPage({}, 'U1', 0), []);
  assert.throws(() => parsePositionsPage({ error: 'bad' }, 'U1', 0), ApiError);
});
