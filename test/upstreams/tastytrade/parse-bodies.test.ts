import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAccounts } from '../../../src/upstreams/tastytrade/parse-accounts.js';
import { errorLabel, parseError, parseItems } from '../../../src/upstreams/tastytrade/parse-envelope.js';
import { parseMarketData } from '../../../src/upstreams/tastytrade/parse-market-data.js';
import { parsePositions } from '../../../src/upstreams/tastytrade/parse-positions.js';
import { parseToken } from '../../../src/upstreams/tastytrade/parse-token.js';
import { marketDataQuery, toMarketDataRequest } from '../../../src/upstreams/tastytrade/symbols.js';
import { fixture } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

test('token answer: top level, lifetime from expires_in, Bearer only', () => {
  assert.deepEqual(parseToken(fixture('tastytrade', 'token.json')), {
    value: 'eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCJ9.sample.sig',
    lifetimeMs: 900_000,
  });
  assert.equal(parseToken({ access_token: 'a', expires_in: '60' }).lifetimeMs, 60_000);
  assert.equal(parseToken({ access_token: 'a' }).lifetimeMs, 900_000);
  assert.throws(() => parseToken(fixture('tastytrade', 'token-invalid-grant.json')), { name: 'UnreadableAnswerError', drift: 'token' });
  assert.throws(() => parseToken({ access_token: 'a', token_type: 'MAC' }), { name: 'UnreadableAnswerError', drift: 'token' });
});

test('error bodies: OAuth error_code, {error:{code}}, nested errors, numeric codes; messages are not kept', () => {
  assert.deepEqual(parseError(fixture('tastytrade', 'token-invalid-grant.json')), { code: 'invalid_grant', specific: null });
  assert.deepEqual(parseError(fixture('tastytrade', 'error-not-permitted.json')), { code: 'not_permitted', specific: null });
  const nested = fixture('tastytrade', 'error-nested.json');
  assert.deepEqual(parseError(nested), { code: 'validation_error', specific: nested.error.errors[0].code });
  assert.deepEqual(parseError({ error: { errors: [{ code: 'invalid_symbol' }] } }), { code: 'invalid_symbol', specific: null });
  assert.deepEqual(parseError(fixture('tastytrade', 'error-numeric-code.json')), { code: '401', specific: null });
  assert.deepEqual(parseError(fixture('tastytrade', 'error-token-invalid.json')), { code: 'token_invalid', specific: null });
  assert.deepEqual(parseError('<html>'), { code: null, specific: null });
  assert.equal(
    errorLabel({ code: 'preflight_check_failure', specific: 'gtc_market_orders_not_supported' }),
    'preflight_check_failure: gtc_market_orders_not_supported',
  );
  assert.equal(errorLabel({ code: 'not_permitted', specific: null }), 'not_permitted');
  assert.equal(errorLabel({ code: null, specific: null }), '');
});

test('envelope: data.items required; a missing one is drift, named by the list', () => {
  assert.equal(parseItems(fixture('tastytrade', 'accounts.json'), 'accounts').length, 3);
  assert.throws(() => parseItems({ items: [] }, 'accounts'), { name: 'UnreadableAnswerError', drift: 'envelope' });
  assert.throws(() => parseItems({ data: {} }, 'positions'), { name: 'UnreadableAnswerError', drift: 'positions' });
  assert.throws(() => parseMarketData({ data: { items: null } }, 0), { name: 'UnreadableAnswerError', drift: 'market-data' });
});

test('accounts: closed ones dropped, nickname or type as name, USD', () => {
  assert.deepEqual(parseAccounts(fixture('tastytrade', 'accounts.json')), [
    { accountId: '5WT00001', name: 'Individual', type: 'Individual', currency: 'USD' },
    { accountId: '5WT00002', name: 'Roth IRA', type: 'Roth IRA', currency: 'USD' },
  ]);
});

test('positions: quantities as strings or numbers, short made negative, multiplier applied, mark or close', () => {
  const rows = parsePositions(fixture('tastytrade', 'positions.json'), '5WT00001', Date.UTC(2026, 2, 2, 16));
  assert.equal(rows.length, 5, 'the row without a symbol is skipped');
  assert.deepEqual(rows[0], {
    accountId: '5WT00001',
    symbol: 'AAPL',
    description: null,
    assetClass: 'stock',
    quantity: 100,
    averageCost: 150.25,
    marketPrice: 172.1,
    marketValue: 17210,
    unrealizedPnl: 2185,
    currency: 'USD',
    freshness: { kind: 'unknown', asOf: '2026-03-02T16:00:00.000Z' },
  });
  assert.deepEqual([rows[1]?.quantity, rows[1]?.marketValue, rows[1]?.unrealizedPnl], [-5, -927.5, 72.5]);
  assert.deepEqual(
    [rows[2]?.assetClass, rows[2]?.marketPrice, rows[2]?.marketValue, rows[2]?.unrealizedPnl, rows[2]?.description],
    ['option', 12.4, 2480, 480, 'SPY Equity Option'],
  );
  // No mark: the previous close stands in, and says so.
  assert.equal(rows[2]?.freshness.kind, 'prior-close');
  assert.deepEqual([rows[3]?.symbol, rows[3]?.quantity], ['BRK.B', 1000]);
  assert.deepEqual([rows[4]?.assetClass, rows[4]?.marketPrice, rows[4]?.marketValue], ['crypto', null, null]);
});

test('market data: numbers or strings, change from prev-close, bad dates and zero prev-close handled', () => {
  const items = parseMarketData(fixture('tastytrade', 'market-data.json'), Date.UTC(2026, 2, 2, 16));
  assert.deepEqual(items[0], {
    symbol: 'AAPL',
    quote: {
      last: 172.1,
      bid: 172.1,
      ask: 172.12,
      bidSize: 300,
      askSize: 200,
      change: 0.62,
      changePercent: 0.3616,
      volume: 51_234_567,
      updatedAt: '2026-03-02T15:04:05.123Z',
      // Documented real-time; as of the item's own updated-at.
      freshness: { kind: 'realtime', asOf: '2026-03-02T15:04:05.123Z' },
    },
  });
  assert.deepEqual([items[1]?.quote.last, items[1]?.quote.change, items[1]?.quote.bidSize], [5210.9, -3.18, null]);
  assert.deepEqual([items[2]?.quote.updatedAt, items[2]?.quote.changePercent, items[2]?.quote.volume], [null, null, 1234.5]);
  assert.equal(items[2]?.quote.freshness.asOf, '2026-03-02T16:00:00.000Z', 'no readable updated-at: as of receipt');
  assert.deepEqual([items[3]?.quote.last, items[3]?.quote.change], [null, null]);
  assert.equal(items[3]?.quote.freshness.kind, 'halted', '"is-trading-halted": true');
});

test('our symbols map to instrument types and back', () => {
  const request = toMarketDataRequest(['AAPL', 'BRK.B', '^VIX', '^GSPC', 'BTC-USD', 'SPY']);
  assert.deepEqual(request.byType, { equity: ['AAPL', 'BRK/B', 'SPY'], index: ['VIX', 'SPX'], cryptocurrency: ['BTC/USD'] });
  assert.equal(request.ours.get('BTC/USD'), 'BTC-USD');
  assert.equal(request.ours.get('SPX'), '^GSPC');
  assert.equal(marketDataQuery(request.byType), 'equity=AAPL,BRK%2FB,SPY&index=VIX,SPX&cryptocurrency=BTC%2FUSD');
});

test('recorded nested refusal: the specific code inside is surfaced beside the outer one', () => {
  const raw = recording('tastytrade', 'error-preflight-check-failure-nested').json as {
    error: { code: string; errors: { code: string }[] };
  };
  const parsed = parseError(raw);
  assert.deepEqual(parsed, { code: raw.error.code, specific: raw.error.errors[0]?.code });
  assert.equal(errorLabel(parsed), `${raw.error.code}: ${raw.error.errors[0]?.code}`);
  const plain = recording('tastytrade', 'error-not-permitted').json as { error: { code: string } };
  assert.equal(errorLabel(parseError(plain)), plain.error.code);
});
