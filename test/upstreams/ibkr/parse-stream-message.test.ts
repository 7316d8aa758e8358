// The websocket's messages read by structure, and market data frames merged per conid into the quote a
// snapshot with the same fields gives: recorded frames first, then the quirks no capture shows (C and H
// prefixes, thousands separators) written as the snapshot documentation writes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeFields, parseStreamMessage, streamedQuote } from '../../../src/upstreams/ibkr/parse-stream-message.js';
import { parseSnapshot, snapshotToQuote } from '../../../src/upstreams/ibkr/parse-snapshot.js';
import { recording } from '../../helpers/recorded.js';

const frame = (name: string) => parseStreamMessage(recording('ibkr', name).text);

test('recorded frames merge per conid: the first frame, then deltas carrying only what changed', () => {
  let fields: Record<string, unknown> | undefined;
  const merged: number[] = [];
  for (const name of [
    'ws-smd-first-aapl-2026',
    'ws-smd-delta-service-ids-2026',
    'ws-smd-delta-bid-ask-2026',
    'ws-smd-delta-last-percent-2026',
  ]) {
    const message = frame(name);
    assert.equal(message.kind, 'market-data', name);
    if (message.kind !== 'market-data') return;
    assert.equal(message.conid, 265598);
    fields = mergeFields(fields, message.fields);
    merged.push(streamedQuote('AAPL', message.conid, fields, message.updatedAt as number).last as number);
  }
  // The last price changes only where a frame carries "31"; the bid-and-ask frame keeps the one before.
  assert.deepEqual(merged, [271.67, 271.68, 271.68, 271.74]);
  const quote = streamedQuote('AAPL', 265598, fields!, 1777552148165);
  assert.deepEqual(
    { bid: quote.bid, ask: quote.ask, changePercent: quote.changePercent, updatedAt: quote.updatedAt },
    { bid: 271.7, ask: 271.73, changePercent: 0.58, updatedAt: new Date(1777552148165).toISOString() },
  );
  // The first frame's "6509": "DPB" is kept by the merge: the later frames, which do not repeat it, are delayed too.
  assert.deepEqual(quote.freshness, { kind: 'delayed', asOf: new Date(1777552148165).toISOString() });
  assert.equal(fields!['6508'] !== undefined, true, 'fields never asked for are kept, and ignored by the quote');
});

test('a streamed quote and a snapshot row with the same fields read the same', () => {
  const [row] = parseSnapshot(recording('ibkr', 'snapshot-populated').json);
  const raw = (recording('ibkr', 'snapshot-populated').json as Record<string, unknown>[])[0]!;
  const { conid, conidEx: _ex, _updated, server_id: _s, '6119': _q, ...fields } = raw;
  assert.deepEqual(streamedQuote('AAPL', conid as number, fields, _updated as number), snapshotToQuote('AAPL', row!, 0));
});

test("IBKR's value quirks in frames: C and H prefixes, thousands separators, M suffixes, N/A", () => {
  const read = (fields: Record<string, unknown>) => streamedQuote('X', 1, fields, 0);
  assert.equal(read({ '31': 'C168.42' }).last, 168.42);
  assert.equal(read({ '31': 'H168.42' }).last, 168.42);
  assert.equal(read({ '88': '1,300', '85': '12,000' }).bidSize, 1300);
  assert.equal(read({ '87': '12.2M' }).volume, 12_200_000);
  assert.equal(read({ '31': 'N/A' }).last, null);
  // Change and percent from the prior close when the frame has none.
  assert.deepEqual([read({ '31': '110', '7741': '100' }).change, read({ '31': '110', '7741': '100' }).changePercent], [10, 10]);
});

test('frames without a conid, heartbeats, the status in one or several frames, the session request', () => {
  assert.deepEqual(parseStreamMessage('{"server_id":"q0","_updated":1,"6119":"q0","topic":"smd+265598"}'), {
    kind: 'market-data-without-conid',
  });
  assert.deepEqual(frame('ws-system-heartbeat-2026'), { kind: 'heartbeat', at: 1777415611502 });
  assert.deepEqual(frame('ws-sts-authenticated-2026'), { kind: 'status', authenticated: true });
  assert.deepEqual(frame('ws-sts-unauthenticated-2024'), { kind: 'status', authenticated: false });
  assert.deepEqual(frame('ws-sts-competing-2024'), { kind: 'status', authenticated: undefined });
  assert.deepEqual(frame('ws-waiting-for-session-documented'), { kind: 'waiting-for-session' });
  assert.deepEqual(frame('ws-system-greeting-2026'), { kind: 'greeting' });
  assert.deepEqual(frame('ws-tic-reply-2026'), { kind: 'other' });
  assert.deepEqual(frame('ws-act-2026'), { kind: 'other' });
  assert.deepEqual(parseStreamMessage('{"error":"Topic unknown","code":1}'), { kind: 'error', message: 'Topic unknown' });
  assert.deepEqual(parseStreamMessage('tic'), { kind: 'unreadable', reason: 'not JSON' });
  assert.deepEqual(parseStreamMessage('[1]'), { kind: 'unreadable', reason: 'not a JSON object' });
});
