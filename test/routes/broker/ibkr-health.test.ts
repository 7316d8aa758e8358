import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { HealthResponse } from '../../../src/routes/broker/schemas.js';
import { startApp } from '../../helpers/app.js';
import { assertMatches } from './schema-check.js';

/** A loopback port nothing listens on: connecting is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('connected: the sandbox gateway (HTTPS, self-signed) is logged in', async (t) => {
  const { get, sandbox } = await startApp(t);
  const res = await get('/api/broker/health');
  assert.equal(res.status, 200);
  assertMatches(HealthResponse, res.body);
  assert.equal(res.body.broker, 'ibkr');
  assert.equal(res.body.status, 'connected');
  assert.equal(res.body.authenticated, true);
  assert.equal(res.body.connected, true);
  assert.match(sandbox.ibkr.origin, /^https:/);
  const again = await get('/api/broker/health');
  assert.equal(again.headers['x-cache'], 'HIT', 'checked at most once per window');
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/auth/status'), 1);
});

test('logged out (401): unauthenticated with a message saying where to log in; data calls are 503 with the reason', async (t) => {
  const { get, sandbox } = await startApp(t);
  sandbox.ibkr.setSession('logged_out');
  const res = await get('/api/broker/health');
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'unauthenticated');
  assert.equal(res.body.authenticated, false);
  assert.equal(res.body.connected, true);
  assert.ok(res.body.message.includes(`log in at ${sandbox.ibkr.origin}`), res.body.message);
  assert.equal(
    sandbox.ibkr.gatewayCount('/iserver/reauthenticate') + sandbox.ibkr.gatewayCount('/iserver/auth/ssodh/init'),
    1,
    'exactly one recovery attempt',
  );

  const accounts = await get('/api/broker/accounts');
  assert.equal(accounts.status, 503);
  assert.equal(accounts.body.error.code, 'BROKER_UNAVAILABLE');
  assert.match(accounts.body.error.message, /not logged in/);
  assert.ok(Number(accounts.headers['retry-after']) > 0);
  assert.ok(!accounts.text.includes(sandbox.ibkr.origin), 'no upstream URL in an error');
});

test('after POST /logout (the auth status answers 200 with every flag false, as recorded): nobody is logged in, and where to log in', async (t) => {
  const { get, sandbox } = await startApp(t);
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  t.after(() => insecure.close());
  const logout = await request(`${sandbox.ibkr.baseUrl}/logout`, { method: 'POST', body: '{}', dispatcher: insecure });
  assert.deepEqual(await logout.body.json(), { status: true });
  const res = await get('/api/broker/health');
  assert.equal(res.body.status, 'unauthenticated');
  assert.match(res.body.message, /nobody is logged in/);
  assert.doesNotMatch(res.body.message, /refuses market data/);
  assert.ok(res.body.message.includes(`log in at ${sandbox.ibkr.origin}/ (the gateway's login page)`), res.body.message);
});

test('"Init session first": one recovery attempt brings the brokerage session back', async (t) => {
  const { get, sandbox } = await startApp(t);
  sandbox.ibkr.setSession('no_session');
  const res = await get('/api/broker/health');
  assert.equal(res.body.status, 'connected', res.body.message);
  assert.match(res.body.message, /re-established/);
  assert.equal(sandbox.ibkr.session, 'connected');
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/auth/ssodh/init'), 1);
});

test('a session lost silently between calls is recovered on the next data call', async (t) => {
  // The snapshot path's own calls are counted: the stream (which reads the session again too) is off.
  const { get, sandbox } = await startApp(t, { env: { BROKER_STREAMING: 'off' } });
  assert.equal((await get('/api/broker/quotes?symbols=AAPL')).status, 200);
  sandbox.ibkr.loseSessionSilently();
  const res = await get('/api/broker/quotes?symbols=MSFT');
  assert.equal(res.status, 200);
  assert.equal(typeof res.body.quotes.MSFT.last, 'number', 'prices after recovery, warm-up included');
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/auth/ssodh/init'), 1);
  assert.equal(sandbox.ibkr.gatewayCount('/iserver/accounts'), 2, '/iserver/accounts read again in the new session');
});

test('disconnected: a closed port answers at once, far below the timeout', async (t) => {
  const port = await closedPort();
  const { get } = await startApp(t, {
    env: { UPSTREAM_TIMEOUT_MS: '60000' },
    configure: (c) => ({ ...c, broker: { ...c.broker, ibkr: { ...c.broker.ibkr, url: `https://127.0.0.1:${port}/v1/api` } } }),
  });
  const res = await get('/api/broker/health');
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'disconnected');
  assert.equal(res.body.connected, false);
  assert.match(res.body.message, /start the IBKR Client Portal Gateway/);
  assert.ok(res.body.latencyMs < 5_000, `refused connections must not wait for the 60 s timeout (${res.body.latencyMs} ms)`);

  const quotes = await get('/api/broker/quotes?symbols=AAPL');
  assert.equal(quotes.status, 503);
  assert.equal(quotes.body.error.code, 'BROKER_UNAVAILABLE');
  assert.ok(Number(quotes.headers['retry-after']) > 0);
  assert.ok(!quotes.text.includes(String(port)), 'no upstream address in the error');
});

test('with IBKR_TLS_VERIFY=true the self-signed certificate is refused and the message says how to fix it', async (t) => {
  const { get } = await startApp(t, { env: { IBKR_TLS_VERIFY: 'true' } });
  const res = await get('/api/broker/health');
  assert.equal(res.body.status, 'disconnected');
  assert.match(res.body.message, /IBKR_TLS_VERIFY=false/);
});

test('"no bridge" and a brokerage session that cannot be started: unauthenticated, saying what to do; quotes 503 with Retry-After; the portfolio still reads', async (t) => {
  const { get, sandbox } = await startApp(t);
  sandbox.ibkr.setSessionFaults({ refusal: 'no-bridge', unrecoverable: true });
  sandbox.ibkr.setSession('no_session');
  const res = await get('/api/broker/health');
  assert.equal(res.body.status, 'unauthenticated', res.body.message);
  assert.equal(res.body.authenticated, false);
  assert.equal(res.body.connected, true);
  assert.match(res.body.message, /no brokerage session and could not start one/);
  assert.match(res.body.message, /Close other IBKR sessions/);
  assert.ok(res.body.message.includes(`log in at ${sandbox.ibkr.origin}`), res.body.message);

  const quotes = await get('/api/broker/quotes?symbols=MSFT');
  assert.equal(quotes.status, 503);
  assert.equal(quotes.body.error.code, 'BROKER_UNAVAILABLE');
  assert.ok(Number(quotes.headers['retry-after']) > 0);
  assert.equal((await get('/api/broker/accounts')).status, 200, 'the login alone reads the accounts');
});
