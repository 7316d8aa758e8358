import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { AccountsResponse, HealthResponse, PositionsResponse, QuotesResponse } from '../../../src/routes/broker/schemas.js';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { assertMatches } from './schema-check.js';

const TASTY = { BROKER: 'tastytrade' };

function noSecrets(app: RunningApp, text: string): void {
  for (const secret of [SANDBOX_CREDENTIALS.tastytradeClientSecret, SANDBOX_CREDENTIALS.tastytradeRefreshToken])
    assert.ok(!text.includes(secret));
  assert.ok(!/Bearer|access_token/i.test(text));
  assert.ok(!text.includes(app.sandbox.tastytrade.origin));
}

test('sandbox: health, accounts, positions and quotes through OAuth, envelope and mixed number types', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write: (chunk, _encoding, done) => {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await startApp(t, { env: TASTY, logger: pino({ level: 'debug' }, sink) });
  const { get, sandbox } = app;
  const health = await get('/api/broker/health');
  assertMatches(HealthResponse, health.body);
  assert.equal(health.body.status, 'connected');
  assert.equal(health.body.broker, 'tastytrade');

  const accounts = await get('/api/broker/accounts');
  assertMatches(AccountsResponse, accounts.body);
  assert.deepEqual(
    accounts.body.accounts.map((a: { accountId: string }) => a.accountId),
    ['5WT00001', '5WT00002'],
  );

  const positions = await get('/api/broker/positions');
  assertMatches(PositionsResponse, positions.body);
  assert.equal(positions.body.positions.length, 13);
  assert.ok(
    positions.body.positions.every(
      (p: { quantity: unknown; marketPrice: unknown }) => typeof p.quantity === 'number' && typeof p.marketPrice === 'number',
    ),
  );
  assert.ok(
    positions.body.positions.some((p: { quantity: number }) => p.quantity < 0),
    'short positions are negative',
  );

  const quotes = await get('/api/broker/quotes?symbols=AAPL,msft,NOSUCH,^VIX,BTC-USD');
  assert.equal(quotes.status, 200);
  assertMatches(QuotesResponse, quotes.body);
  assert.deepEqual(Object.keys(quotes.body.quotes).sort(), ['AAPL', 'BTC-USD', 'MSFT', '^VIX']);
  assert.deepEqual(quotes.body.missing, ['NOSUCH']);
  const aapl = quotes.body.quotes.AAPL;
  assert.equal(typeof aapl.last, 'number');
  assert.equal(typeof aapl.change, 'number');
  assert.equal(typeof aapl.volume, 'number');
  assert.equal(sandbox.tastytrade.count('/oauth/token'), 1, 'one token for everything');
  assert.equal(sandbox.tastytrade.unauthorized, 0);
  for (const res of [health, accounts, positions, quotes]) noSecrets(app, res.text);
  const log = lines.join('');
  assert.match(log, /upstream call/, 'upstream calls are logged');
  assert.ok(sandbox.tastytrade.lastToken !== undefined && !log.includes(sandbox.tastytrade.lastToken), 'no access token in the log');
  for (const secret of [SANDBOX_CREDENTIALS.tastytradeClientSecret, SANDBOX_CREDENTIALS.tastytradeRefreshToken])
    assert.ok(!log.includes(secret), 'no credential in the log');
});

test('an access token that expired early: one refresh, one retry, the caller sees data', async (t) => {
  const { get, sandbox } = await startApp(t, { env: TASTY });
  assert.equal((await get('/api/broker/accounts')).status, 200);
  sandbox.tastytrade.expireTokens();
  const res = await get('/api/broker/positions');
  assert.equal(res.status, 200);
  assert.equal(sandbox.tastytrade.count('/oauth/token'), 2);
  assert.equal(sandbox.tastytrade.unauthorized, 1, 'the first call after expiry got 401; every later one used the new token');
});

test('concurrent 401s share one refresh', async (t) => {
  const { get, sandbox } = await startApp(t, { env: TASTY });
  assert.equal((await get('/api/broker/accounts')).status, 200);
  sandbox.tastytrade.expireTokens();
  const results = await Promise.all(['AAPL', 'MSFT', 'IBM', 'SPY', 'QQQ', 'NVDA'].map((s) => get(`/api/broker/quotes?symbols=${s}`)));
  assert.ok(results.every((r) => r.status === 200));
  assert.equal(sandbox.tastytrade.count('/oauth/token'), 2, 'one refresh in flight at a time');
});

test('a refused refresh token: health unauthenticated, data 503 with the reason, and no retry storm', async (t) => {
  const app = await startApp(t, {
    env: TASTY,
    configure: (c) => ({ ...c, broker: { ...c.broker, tastytrade: { ...c.broker.tastytrade, refreshToken: 'revoked-refresh-token' } } }),
  });
  const health = await app.get('/api/broker/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.status, 'unauthenticated');
  assert.match(health.body.message, /invalid_grant/);
  const res = await app.get('/api/broker/accounts');
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'BROKER_UNAVAILABLE');
  assert.match(res.body.error.message, /refresh token/);
  assert.equal(app.sandbox.tastytrade.count('/oauth/token'), 1, 'a refused refresh token is not tried again at once');
  assert.ok(!res.text.includes('revoked-refresh-token'));
  noSecrets(app, health.text + res.text);
});

test('429 from Tastytrade: 503 BROKER_UNAVAILABLE with Retry-After, then nothing sent while backed off', async (t) => {
  // The snapshot path: with the feed on, the one 429 could go to the feed's quote token request instead.
  const { get, sandbox } = await startApp(t, { env: { ...TASTY, BROKER_STREAMING: 'off' } });
  assert.equal((await get('/api/broker/health')).status, 200);
  sandbox.tastytrade.setFaults({ fault: 'http429', remaining: 1 });
  const res = await get('/api/broker/quotes?symbols=AAPL');
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'BROKER_UNAVAILABLE');
  assert.ok(Number(res.headers['retry-after']) >= 2);
  const before = sandbox.tastytrade.count();
  assert.equal((await get('/api/broker/quotes?symbols=MSFT')).status, 503);
  assert.equal(sandbox.tastytrade.count(), before);
});
