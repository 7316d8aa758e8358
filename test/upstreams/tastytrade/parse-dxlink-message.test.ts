// The DXLink reader on the recorded frames (test/fixtures/recorded/tastytrade/dxlink-*): each message kind,
// COMPACT events with "NaN" and exponent numbers, and the merge of Quote, Trade and Summary into a quote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  dxNumber,
  eventTime,
  feedEvents,
  mergeEvent,
  parseDxlinkMessage,
  type SymbolFields,
  streamedQuote,
} from '../../../src/upstreams/tastytrade/parse-dxlink-message.js';
import { toStreamerSymbol } from '../../../src/upstreams/tastytrade/symbols.js';
import { recording } from '../../helpers/recorded.js';

const frame = (name: string) => parseDxlinkMessage(recording('tastytrade', name).text);

test('recorded handshake frames: SETUP with its timeouts, the two AUTH_STATEs, CHANNEL_OPENED, FEED_CONFIG without fields', () => {
  assert.deepEqual(frame('dxlink-setup-documented'), { kind: 'setup', keepaliveTimeout: 60, acceptKeepaliveTimeout: 60 });
  assert.deepEqual(frame('dxlink-auth-state-unauthorized-documented'), { kind: 'auth-state', authorized: false });
  assert.deepEqual(frame('dxlink-auth-state-authorized-documented'), { kind: 'auth-state', authorized: true });
  assert.deepEqual(frame('dxlink-channel-opened-documented'), { kind: 'channel-opened', channel: 3 });
  assert.deepEqual(frame('dxlink-feed-config-documented'), { kind: 'feed-config', channel: 3, eventFields: undefined });
  assert.deepEqual(frame('dxlink-keepalive-library'), { kind: 'keepalive' });
  assert.deepEqual(frame('dxlink-error-timeout-library'), {
    kind: 'error',
    error: 'TIMEOUT',
    message: 'No keepalive received for 60012ms',
  });
});

test('recorded COMPACT trades: two events, the exponent volume read, "NaN" unknown', () => {
  const message = frame('dxlink-feed-data-trade-compact-nan-documented');
  assert.equal(message.kind, 'feed-data');
  // Read with the fields the recorded FEED_SETUP asked for, as the client does while no FEED_CONFIG names them.
  const setup = JSON.parse(String(recording('tastytrade', 'dxlink-feed-config-documented').request.requestBody));
  const events = feedEvents((message as { data: unknown }).data, setup.acceptEventFields);
  assert.deepEqual(
    events.map((e) => [e.eventSymbol, dxNumber(e.values.price), dxNumber(e.values.dayVolume), dxNumber(e.values.size)]),
    [
      ['SPY', 559.36, 13_743_299, 100],
      ['BTC/USD:CXTALP', 58_356.71, null, null],
    ],
  );
});

test('events of one symbol merge into the snapshot meaning; a NaN volume keeps the one known; change needs the previous close', () => {
  const fields: SymbolFields = {};
  const event = (eventType: string, values: Record<string, unknown>) => ({ eventType, eventSymbol: 'SPY', values });
  assert.equal(mergeEvent(fields, event('Trade', { price: 559.36, dayVolume: 1.3743299e7, size: 100 })), true);
  assert.equal(streamedQuote('SPY', fields, 0, 'api').change, null, 'no previous close yet');
  mergeEvent(fields, event('Summary', { prevDayClosePrice: 555.36, dayOpenPrice: 556 }));
  mergeEvent(fields, event('Quote', { bidPrice: 559.35, askPrice: 559.37, bidSize: 300, askSize: 'NaN' }));
  assert.equal(mergeEvent(fields, event('Trade', { price: 559.36, dayVolume: 'NaN', size: 'NaN' })), false, 'nothing changed');
  const quote = streamedQuote('SPY', fields, Date.UTC(2026, 0, 2), 'api');
  assert.deepEqual(quote, {
    symbol: 'SPY',
    last: 559.36,
    bid: 559.35,
    ask: 559.37,
    bidSize: 300,
    askSize: null,
    change: 4,
    changePercent: 0.7203,
    volume: 13_743_299,
    updatedAt: '2026-01-02T00:00:00.000Z',
    // The "api" token's feed: real-time, as of the tick.
    freshness: { kind: 'realtime', asOf: '2026-01-02T00:00:00.000Z' },
  });
});

test("the event time: a trade's time, the later of a quote's bid and ask times, none when they are 0", () => {
  const event = (eventType: string, values: Record<string, unknown>) => ({ eventType, eventSymbol: 'SPY', values });
  assert.equal(eventTime(event('Trade', { time: 1_700_000_000_123 })), 1_700_000_000_123);
  assert.equal(eventTime(event('Quote', { bidTime: 1_700_000_000_000, askTime: 1_700_000_000_500 })), 1_700_000_000_500);
  assert.equal(eventTime(event('Quote', { bidTime: 0, askTime: 0 })), null);
  assert.equal(eventTime(event('Summary', { prevDayClosePrice: 1 })), null);
});

test('FULL events and several types in one COMPACT array are read too; partial trailing values are ignored', () => {
  const fields = { Quote: ['eventType', 'eventSymbol', 'bidPrice'], Trade: ['eventType', 'eventSymbol', 'price'] };
  const compact = ['Quote', ['Quote', 'A', 1, 'Quote', 'B'], 'Trade', ['Trade', 'A', 2]];
  assert.deepEqual(
    feedEvents(compact, fields).map((e) => [e.eventType, e.eventSymbol]),
    [
      ['Quote', 'A'],
      ['Trade', 'A'],
    ],
  );
  assert.equal(feedEvents([{ eventType: 'Quote', eventSymbol: 'A', bidPrice: 1 }], fields).length, 1);
  assert.equal(parseDxlinkMessage('not json').kind, 'unreadable');
  assert.equal(parseDxlinkMessage('{"type":"FEED_DATA"}').kind, 'unreadable');
});

test('streamer symbols: equities and indices as for market data, crypto on CXTALP as the recorded frame names it', () => {
  assert.deepEqual(['AAPL', 'BRK.B', '^GSPC', '^VIX', 'BTC-USD'].map(toStreamerSymbol), ['AAPL', 'BRK/B', 'SPX', 'VIX', 'BTC/USD:CXTALP']);
});
