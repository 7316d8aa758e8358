import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { request } from 'undici';
import { createTastytradeSimulator, type TastytradeSimulator } from '../../../src/sandbox/tastytrade/tastytrade-simulator.js';

const UA = { 'user-agent': 'test-client/1.0' };

async function start(t: TestContext, now?: () => number): Promise<TastytradeSimulator> {
  const sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r', now });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

async function call(
  sim: TastytradeSimulator,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await request(`${sim.origin}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

async function token(sim: TastytradeSimulator): Promise<string> {
  const res = await call(sim, '/oauth/token', UA, { grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' });
  assert.equal(res.status, 200);
  assert.equal(res.json.expires_in, 900);
  assert.equal(res.json.token_type, 'Bearer');
  return res.json.access_token;
}

test('a User-Agent is required on every call, the token endpoint included', async (t) => {
  const sim = await start(t);
  assert.equal((await call(sim, '/oauth/token', {}, { grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' })).status, 401);
});

test('OAuth: a wrong refresh token is invalid_grant; a right one gives a Bearer token that expires', async (t) => {
  const clock = { t: Date.now() };
  const sim = await start(t, () => clock.t);
  const bad = await call(sim, '/oauth/token', UA, { grant_type: 'refresh_token', refresh_token: 'x', client_secret: 's' });
  assert.equal(bad.status, 401);
  assert.equal(bad.json.error_code, 'invalid_grant');
  const access = await token(sim);
  const auth = { ...UA, authorization: `Bearer ${access}` };
  const accounts = await call(sim, '/customers/me/accounts', auth);
  assert.equal(accounts.json.context, '/customers/me/accounts');
  assert.equal(accounts.json.data.items[0].account['account-number'], '5WT00001');
  clock.t += 900_001;
  const expired = await call(sim, '/customers/me/accounts', auth);
  assert.equal(expired.status, 401);
  assert.equal(expired.json.error.code, 'token_invalid');
});

test('positions: quantities as strings (as recorded); marks only with include-marks', async (t) => {
  const sim = await start(t);
  const auth = { ...UA, authorization: `Bearer ${await token(sim)}` };
  const plain = (await call(sim, '/accounts/5WT00001/positions', auth)).json.data.items;
  assert.equal(plain[0].mark, undefined);
  const marked = (await call(sim, '/accounts/5WT00001/positions?include-marks=true', auth)).json.data.items;
  assert.equal(typeof marked[0].mark, 'string');
  assert.deepEqual(new Set(marked.map((p: { quantity: unknown }) => typeof p.quantity)), new Set(['string']));
  assert.equal((await call(sim, '/accounts/NOPE/positions', auth)).json.error.code, 'not_permitted');
});

test('market data by type: unknown symbols absent, at most 100 symbols', async (t) => {
  const sim = await start(t);
  const auth = { ...UA, authorization: `Bearer ${await token(sim)}` };
  const res = await call(sim, '/market-data/by-type?equity=AAPL,NOSUCH&index=SPX&cryptocurrency=BTC%2FUSD', auth);
  assert.deepEqual(
    res.json.data.items.map((i: { symbol: string }) => i.symbol),
    ['AAPL', 'SPX', 'BTC/USD'],
  );
  assert.equal(typeof res.json.data.items[0]['prev-close'], 'string');
  const many = Array.from({ length: 101 }, (_, i) => `S${i}`).join(',');
  assert.equal((await call(sim, `/market-data/by-type?equity=${many}`, auth)).status, 400);
});
