import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QuotesResponse } from '../../../src/routes/broker/schemas.js';
import { UNIVERSE } from '../../../src/sandbox/universe.js';
import { startApp } from '../../helpers/app.js';
import { assertMatches } from './schema-check.js';

const SNAPSHOT = '/iserver/marketdata/snapshot';
/** These tests are about the snapshot path (streamed quotes: streamed-quotes.test.ts). */
const SNAPSHOTS = { env: { BROKER_STREAMING: 'off' } };

test('first request gets prices despite the empty first snapshot; unknown symbols go to missing', async (t) => {
  const { get, sandbox } = await startApp(t, SNAPSHOTS);
  const res = await get('/api/broker/quotes?symbols=aapl,MSFT,AAPL,NOSUCH,BRK.B');
  assert.equal(res.status, 200);
  assertMatches(QuotesResponse, res.body);
  assert.deepEqual(Object.keys(res.body.quotes).sort(), ['AAPL', 'BRK.B', 'MSFT']);
  assert.deepEqual(res.body.missing, ['NOSUCH']);
  for (const quote of Object.values(res.body.quotes) as Record<string, unknown>[]) {
    for (const field of ['last', 'bid', 'ask', 'bidSize', 'askSize', 'change', 'changePercent', 'volume'])
      assert.equal(typeof quote[field], 'number', `${String(quote.symbol)}.${field}`);
    assert.ok((quote.bid as number) <= (quote.ask as number));
  }
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), 2, 'one subscribing call, one warm-up retry');
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/accounts'), 1, '/iserver/accounts before the first snapshot');
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/secdef/search'), 4, 'one search per distinct symbol');

  const later = await get('/api/broker/quotes?symbols=MSFT,AAPL');
  assert.equal(later.status, 200);
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/secdef/search'), 4, 'conids cached');
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), 3, 'subscribed conids answer on the first call');
});

test('100 concurrent identical quote requests cause one snapshot call', async (t) => {
  const { get, sandbox } = await startApp(t, SNAPSHOTS);
  const symbols = UNIVERSE.slice(0, 10).map((i) => i.symbol);
  // Warm the conids and subscriptions under another cache key.
  assert.equal((await get(`/api/broker/quotes?symbols=${[...symbols, 'SPY'].join(',')}`)).status, 200);
  sandbox.ibkr.resetStats();
  const results = await Promise.all(Array.from({ length: 100 }, () => get(`/api/broker/quotes?symbols=${symbols.join(',')}`)));
  assert.ok(results.every((r) => r.status === 200));
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), 1);
  assert.equal(sandbox.ibkr.count(), 1, 'nothing else was sent either');
  assert.ok(results.every((r) => r.text === results[0]!.text));
});

test('50 new symbols are looked up within the gateway pacing (the simulator answers 429 above 10/s)', async (t) => {
  const { get, sandbox } = await startApp(t);
  const symbols = UNIVERSE.slice(20, 70).map((i) => i.symbol);
  const res = await get(`/api/broker/quotes?symbols=${symbols.join(',')}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(Object.keys(res.body.quotes).length, 50);
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/secdef/search'), 50);
});

test('symbols validation: more than 50, bad syntax, empty', async (t) => {
  const { get, sandbox } = await startApp(t, SNAPSHOTS);
  const many = UNIVERSE.slice(0, 51)
    .map((i) => i.symbol)
    .join(',');
  const tooMany = await get(`/api/broker/quotes?symbols=${many}`);
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.error.code, 'INVALID_PARAMETER');
  assert.match(tooMany.body.error.message, /at most 50/);
  const dupes = await get(`/api/broker/quotes?symbols=${Array(60).fill('AAPL').join(',')}`);
  assert.equal(dupes.status, 200, 'duplicates count once');

  const bad = await get('/api/broker/quotes?symbols=AAPL,MS%24FT');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'INVALID_PARAMETER');
  assert.match(bad.body.error.message, /"MS\$FT"/);
  for (const query of ['symbols=', 'symbols=,%20,', '']) {
    const res = await get(`/api/broker/quotes?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, 'MISSING_PARAMETER', query);
  }
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), 2, 'only the valid duplicate request reached the gateway (subscribe + warm-up)');
});
