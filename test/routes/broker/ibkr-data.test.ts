import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { AccountsResponse, PositionsResponse } from '../../../src/routes/broker/schemas.js';
import { startApp } from '../../helpers/app.js';
import { assertMatches } from './schema-check.js';

test('sandbox: a plausible paper account, accounts read from /portfolio/accounts', async (t) => {
  const { get, sandbox } = await startApp(t);
  const res = await get('/api/broker/accounts');
  assert.equal(res.status, 200);
  assertMatches(AccountsResponse, res.body);
  // Paper accounts are of type "DEMO", as a recorded one is.
  assert.deepEqual(res.body.accounts, [
    { accountId: 'DU1234567', name: 'Paper trading', type: 'DEMO', currency: 'USD' },
    { accountId: 'DU7654321', name: 'DU7654321', type: 'DEMO', currency: 'USD' },
  ]);
  assert.equal(res.headers['x-cache'], 'MISS');
  assert.equal((await get('/api/broker/accounts')).headers['x-cache'], 'HIT');
  assert.equal(sandbox.ibkr.gatewayCount('/portfolio/accounts'), 1);
});

test('positions: every account, every page of 100 until a short one (rows state the page size), /portfolio/accounts first', async (t) => {
  const { get, sandbox } = await startApp(t);
  sandbox.ibkr.setPositionCount('DU1234567', 250);
  const res = await get('/api/broker/positions');
  assert.equal(res.status, 200);
  assertMatches(PositionsResponse, res.body);
  const mine = res.body.positions.filter((p: { accountId: string }) => p.accountId === 'DU1234567');
  assert.equal(mine.length, 250);
  assert.equal(res.body.positions.length, 253);
  assert.equal(new Set(mine.map((p: { symbol: string }) => p.symbol)).size, 250, 'no page read twice');
  for (const page of [0, 1, 2]) assert.equal(sandbox.ibkr.gatewayCount(`/portfolio/DU1234567/positions/${page}`), 1, `page ${page}`);
  assert.equal(sandbox.ibkr.gatewayCount('/portfolio/DU1234567/positions/3'), 0, 'page 2 held 50 of 100: no empty page asked for');
  assert.equal(sandbox.ibkr.gatewayCount('/portfolio/DU7654321/positions/1'), 0);
  assert.equal(sandbox.ibkr.gatewayCount('/portfolio/accounts'), 1);
  const p = mine[0];
  assert.equal(typeof p.quantity, 'number');
  assert.equal(typeof p.marketValue, 'number');
  assert.ok(Math.abs(p.marketValue - p.quantity * p.marketPrice) < 0.01 * Math.abs(p.marketValue) + 0.01);
});

test('/portfolio/accounts is called at most once per 5 s: accounts then positions share one call', async (t) => {
  const { get, sandbox } = await startApp(t);
  const [accounts, positions] = await Promise.all([get('/api/broker/accounts'), get('/api/broker/positions')]);
  assert.equal(accounts.status, 200);
  assert.equal(positions.status, 200);
  assert.equal(sandbox.ibkr.gatewayCount('/portfolio/accounts'), 1, 'the simulator would answer a second call within 5 s with 429');
});

test('429 from the gateway with nothing cached: 503 BROKER_UNAVAILABLE with Retry-After, and no further calls while backed off', async (t) => {
  const { get, sandbox } = await startApp(t);
  sandbox.ibkr.setFaults({ fault: 'http429', remaining: 1, retryAfter: 7 });
  const res = await get('/api/broker/accounts');
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'BROKER_UNAVAILABLE');
  assert.equal(res.headers['retry-after'], '7');
  const before = sandbox.ibkr.count();
  const again = await get('/api/broker/positions');
  assert.equal(again.status, 503);
  assert.ok(Number(again.headers['retry-after']) >= 1);
  assert.equal(sandbox.ibkr.count(), before, 'backed off: nothing sent');
});

test('429 with a last good value inside its stale window: the value is served (STALE) while the refresh backs off', async (t) => {
  const { get, sandbox } = await startApp(t, {
    env: { CACHE_BROKER_POSITIONS_FRESH_SECONDS: '0', CACHE_BROKER_POSITIONS_STALE_SECONDS: '60' },
  });
  const first = await get('/api/broker/positions');
  assert.equal(first.status, 200);
  sandbox.ibkr.setFaults({ fault: 'http429', remaining: 1 });
  const refused = once(sandbox.ibkr, 'request');
  const res = await get('/api/broker/positions');
  await refused;
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-cache'], 'STALE');
  assert.deepEqual(res.body, first.body);
});
