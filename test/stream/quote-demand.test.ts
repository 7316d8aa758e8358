import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QuoteDemand } from '../../src/stream/quote-demand.js';

test('a topic holds its symbols until released; a REST request for the retention after it', () => {
  const demand = new QuoteDemand(60_000);
  const topic = {};
  assert.equal(demand.hold(topic, ['AAPL', 'SPY'], 0), true);
  assert.equal(demand.hold({}, ['AAPL'], 0), false, 'already needed');
  assert.equal(demand.touch(['MSFT'], 1_000), true);
  assert.deepEqual([...demand.wanted(2_000, 5_000)].sort(), [
    ['AAPL', 7_000],
    ['MSFT', 61_000],
    ['SPY', 7_000],
  ]);
  demand.release(topic);
  assert.equal(demand.needs('SPY', 2_000), false);
  assert.equal(demand.needs('AAPL', 2_000), true, 'the other topic still holds it');
  assert.equal(demand.needs('MSFT', 60_999), true);
  assert.equal(demand.needs('MSFT', 61_000), false, '60 s after the last request');
  assert.deepEqual([...demand.wanted(61_000, 5_000).keys()], ['AAPL']);
});
