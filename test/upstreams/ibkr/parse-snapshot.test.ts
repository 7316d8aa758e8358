import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/core/errors.js';
import { parsePrice, parseSnapshot, snapshotToQuote } from '../../../src/upstreams/ibkr/parse-snapshot.js';
import { fixture } from '../../helpers/fixtures.js';

test('the empty first snapshot is recognised as having no data', () => {
  const rows = parseSnapshot(fixture('ibkr', 'snapshot-first.json'));
  assert.deepEqual(
    rows.map((r) => [r.conid, r.hasData]),
    [
      [265598, false],
      [756733, false],
    ],
  );
  assert.deepEqual(snapshotToQuote('AAPL', rows[0]!, Date.UTC(2026, 3, 28)), {
    symbol: 'AAPL',
    last: null,
    bid: null,
    ask: null,
    bidSize: null,
    askSize: null,
    change: null,
    changePercent: null,
    volume: null,
    updatedAt: null,
    // No availability, no time: nothing said, as of receipt.
    freshness: { kind: 'unknown', asOf: '2026-04-28T00:00:00.000Z' },
  });
});

test('a populated snapshot: "1,300", "50.2M", string prices, change and percent, update time', () => {
  const [aapl] = parseSnapshot(fixture('ibkr', 'snapshot-populated.json'));
  assert.deepEqual(snapshotToQuote('AAPL', aapl!, Date.UTC(2026, 3, 28)), {
    symbol: 'AAPL',
    last: 168.42,
    bid: 168.41,
    ask: 168.42,
    bidSize: 1300,
    askSize: 600,
    change: 3.5,
    changePercent: 0.54,
    volume: 50_200_000,
    updatedAt: '2024-04-08T17:21:51.593Z',
    // "6509": "RpB": real-time, as of the gateway's _updated.
    freshness: { kind: 'realtime', asOf: '2024-04-08T17:21:51.593Z' },
  });
});

test('"C168.42" is a closing price, change computed from the prior close when the gateway sends none', () => {
  const spy = parseSnapshot(fixture('ibkr', 'snapshot-populated.json'))[1]!;
  assert.equal(spy.last, 656.25);
  assert.equal(spy.lastFlag, 'closing');
  const quote = snapshotToQuote('SPY', spy, 0);
  // "DpB" with a "C" price: the previous close, sent by the delayed feed.
  assert.deepEqual(quote.freshness, { kind: 'prior-close', asOf: '2024-04-08T17:21:51.600Z', feed: 'delayed' });
  assert.equal(quote.change, 6.25);
  assert.equal(quote.changePercent, 0.9615);
  assert.equal(quote.volume, 71_400);
  assert.equal(quote.bidSize, 900);
  assert.equal(quote.askSize, 1200);
});

test('"H…" is a halted price; blanks and N/A become null; a row without any field has no data', () => {
  const rows = parseSnapshot(fixture('ibkr', 'snapshot-populated.json'));
  const halted = rows[2]!;
  assert.deepEqual(
    [halted.last, halted.lastFlag, halted.bid, halted.ask, halted.volume, halted.changePercent],
    [12.04, 'halted', null, null, 1_234_567, -5.2],
  );
  // "H" says halted whatever 6509 says ("Z": frozen, from the real-time feed).
  assert.deepEqual(snapshotToQuote('XYZ', halted, 0).freshness, { kind: 'halted', asOf: '1970-01-01T00:00:00.000Z', feed: 'realtime' });
  assert.equal(rows[3]!.hasData, false);
  assert.deepEqual(parsePrice('c1,168.5'), { value: 1168.5, flag: 'closing' });
  assert.deepEqual(parsePrice(12), { value: 12, flag: null });
});

test('a snapshot that is not a list is an upstream error', () => {
  assert.throws(() => parseSnapshot(fixture('ibkr', 'init-session-first.json')), ApiError);
});
