import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type BrokerQuote, emptyQuote } from '../../src/broker/broker.js';
import { completeQuote, isComplete } from '../../src/broker/quote-completion.js';

const snapshot: BrokerQuote = {
  symbol: 'SPX',
  last: 5_100,
  bid: 5_099.5,
  ask: 5_100.5,
  bidSize: 3,
  askSize: 4,
  change: 100,
  changePercent: 2,
  volume: 1_000,
  updatedAt: '2026-11-26T15:00:00.000Z',
  freshness: { kind: 'delayed', asOf: '2026-11-26T15:00:00.000Z' },
};

test('a stream quote lacking fields is completed by a snapshot: the stream wins, the snapshot fills the rest', () => {
  const streamed = {
    ...emptyQuote('SPX', Date.parse('2026-11-26T15:00:05.000Z')),
    last: 5_150,
    bid: 5_149,
    updatedAt: '2026-11-26T15:00:05.000Z',
    freshness: { kind: 'realtime' as const, asOf: '2026-11-26T15:00:05.000Z' },
  };
  assert.equal(isComplete(streamed), false);
  const completed = completeQuote(streamed, snapshot);
  // The change is the streamed last price's against the previous close the snapshot implies (5,100 - 100).
  assert.deepEqual(completed, {
    symbol: 'SPX',
    last: 5_150,
    bid: 5_149,
    ask: 5_100.5,
    bidSize: 3,
    askSize: 4,
    change: 150,
    changePercent: 3,
    volume: 1_000,
    updatedAt: '2026-11-26T15:00:05.000Z',
    // The stream's statement of its freshness stands: it is the newer one.
    freshness: { kind: 'realtime', asOf: '2026-11-26T15:00:05.000Z' },
  });
  assert.equal(isComplete(completed), true);
});

test('what the stream sends is kept, a change included', () => {
  const streamed = { ...snapshot, last: 5_200, change: 200, changePercent: 4, volume: null };
  assert.deepEqual(completeQuote(streamed, snapshot), { ...streamed, volume: 1_000 });
});
