import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import type { IbkrSimulator } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { SimulatedUpstream } from '../../../src/sandbox/simulated-upstream.js';
import { RequestPacer } from '../../../src/broker/request-pacer.js';
import { ibkrPacerOptions } from '../../../src/upstreams/ibkr/ibkr-gateway.js';
import { IbkrBroker } from '../../../src/upstreams/ibkr/ibkr-broker.js';
import { recording } from '../../helpers/recorded.js';
import { brokerOnSimulator } from './broker-on-simulator.js';
import { ISERVER_ACCOUNTS_STAND_IN } from './iserver-accounts-stand-in.js';

const setup = brokerOnSimulator;

function nextRequest(sim: IbkrSimulator, path: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (event: { path: string }) => {
      if (event.path === `/v1/api${path}`) {
        sim.off('request', listener);
        resolve();
      }
    };
    sim.on('request', listener);
  });
}

test('keep-alive: POST /tickle on the configured period while started', async (t) => {
  const { sim, broker } = await setup(t, { tickleIntervalMs: 30 });
  broker.start();
  await nextRequest(sim, '/tickle');
  await nextRequest(sim, '/tickle');
  assert.ok(sim.gatewayCount('/tickle') >= 2);
});

test('a tickle that finds the session lost silently makes one recovery attempt', async (t) => {
  const { sim, broker } = await setup(t);
  sim.loseSessionSilently();
  const recovered = nextRequest(sim, '/iserver/auth/ssodh/init');
  await broker.tickle();
  await recovered;
  assert.equal(sim.session, 'connected');
  assert.equal(sim.gatewayCount('/iserver/auth/ssodh/init'), 1);
});

test('a tickle while logged out does not hammer the gateway with recoveries', async (t) => {
  const { sim, broker } = await setup(t);
  sim.setSession('logged_out');
  await broker.tickle();
  assert.equal(sim.gatewayCount('/iserver/reauthenticate') + sim.gatewayCount('/iserver/auth/ssodh/init'), 0);
});

test('after a failed recovery, callers fail fast for a while instead of trying again', async (t) => {
  const { sim, broker } = await setup(t);
  sim.setSession('logged_out');
  await assert.rejects(broker.accounts(), { code: 'BROKER_UNAVAILABLE' });
  await assert.rejects(broker.positions(), { code: 'BROKER_UNAVAILABLE' });
  assert.equal(sim.gatewayCount('/iserver/reauthenticate'), 1);
});

test('the empty first snapshot is real: without warm-up retries the first answer has no prices', async (t) => {
  const { sim, broker } = await setup(t, { warmupRetries: 0 });
  const first = await broker.quotes(['AAPL']);
  assert.equal(first.quotes.AAPL?.last, null);
  const second = await broker.quotes(['AAPL']);
  assert.equal(typeof second.quotes.AAPL?.last, 'number');
  assert.equal(sim.gatewayCount('/iserver/marketdata/snapshot'), 2);
});

test('the keep-alive runs only when started with a period, and close stops it', async (t) => {
  const { sim, broker } = await setup(t, { tickleIntervalMs: 20 });
  assert.equal(broker.keepAliveRunning, false);
  broker.start();
  assert.equal(broker.keepAliveRunning, true);
  await once(sim, 'request');
  await broker.close();
  assert.equal(broker.keepAliveRunning, false);
  broker.start();
  assert.equal(broker.keepAliveRunning, false, 'a closed broker never starts again');
  const { broker: disabled } = await setup(t, { tickleIntervalMs: 0 });
  disabled.start();
  assert.equal(disabled.keepAliveRunning, false);
});

test('the warm-up is bounded, and a conid that never fills is not warmed up again on the next request', async (t) => {
  const { sim, broker } = await setup(t, { warmupRetries: 3, warmupDelayMs: 5 });
  sim.withoutMarketData.add('IBM');
  const first = await broker.quotes(['AAPL', 'IBM']);
  assert.equal(typeof first.quotes.AAPL?.last, 'number');
  assert.equal(first.quotes.IBM?.last, null, 'known symbol without data: nulls, not missing');
  assert.deepEqual(first.missing, []);
  assert.equal(sim.gatewayCount('/iserver/marketdata/snapshot'), 4, 'first call plus three bounded retries');
  await broker.quotes(['IBM']);
  assert.equal(sim.gatewayCount('/iserver/marketdata/snapshot'), 5, 'no second warm-up within the minute');
});

/**
 * A gateway answering the auth status with `status` until a recovery call, then with `after` (by default the
 * recorded authenticated one: the recovery worked).
 */
async function recordedGateway(
  t: TestContext,
  status: unknown,
  after: unknown = recording('ibkr', 'auth-status-authenticated-2023').json,
): Promise<{ broker: IbkrBroker; recoveries: string[]; origin: string }> {
  const recoveries: string[] = [];
  const authenticated = after;
  const gateway = new SimulatedUpstream({
    name: 'recorded-ibkr',
    handler: (req) => {
      const path = req.url.pathname.replace('/v1/api', '');
      if (path === '/iserver/auth/ssodh/init' || path === '/iserver/reauthenticate') {
        recoveries.push(path);
        return { status: 200, body: {} };
      }
      if (path === '/iserver/auth/status') return { status: 200, body: recoveries.length === 0 ? status : authenticated };
      // Health reads data once per session.
      if (path === '/iserver/accounts') return { status: 200, body: ISERVER_ACCOUNTS_STAND_IN };
      return { status: 404, body: {} };
    },
  });
  await gateway.listen();
  t.after(() => gateway.close());
  const broker = new IbkrBroker({
    url: `${gateway.origin}/v1/api`,
    tlsVerify: true,
    timeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    tickleIntervalMs: 0,
    gateway: { recoveryPollMs: 1 },
  });
  t.after(() => broker.close());
  return { broker, recoveries, origin: gateway.origin };
}

test('recorded status without a session (not connected, no "established"): a new brokerage session is started', async (t) => {
  const { broker, recoveries } = await recordedGateway(t, recording('ibkr', 'auth-status-not-authenticated').json);
  const health = await broker.health();
  assert.equal(health.status, 'connected', health.message);
  assert.deepEqual(recoveries, ['/iserver/auth/ssodh/init']);
});

test('recorded status after a logout (2026, all flags false): health says nobody is logged in, and where to log in', async (t) => {
  const loggedOut = recording('ibkr', 'auth-status-logged-out-2026').json;
  // No brokerage session starts after a logout: the status stays as recorded.
  const { broker, recoveries, origin } = await recordedGateway(t, loggedOut, loggedOut);
  const health = await broker.health();
  assert.equal(health.status, 'unauthenticated', health.message);
  assert.equal(health.authenticated, false);
  assert.match(health.message, /nobody is logged in/);
  assert.doesNotMatch(health.message, /refuses market data/, 'not read as a login without a brokerage session');
  assert.ok(health.message.includes(`log in at ${origin}/ (the gateway's login page)`), health.message);
  assert.deepEqual(recoveries, ['/iserver/auth/ssodh/init'], 'one attempt, as for any missing session');
});

test('a session that lost its authentication but is still connected (no "established", as real gateways send) is re-authenticated', async (t) => {
  const raw = recording('ibkr', 'auth-status-authenticated-2023').json as Record<string, unknown>;
  const { broker, recoveries } = await recordedGateway(t, { ...raw, authenticated: false });
  const health = await broker.health();
  assert.equal(health.status, 'connected', health.message);
  assert.deepEqual(recoveries, ['/iserver/reauthenticate']);
});

test('an auth status the check cannot read is reported as drift with the health, not as a failure of the check', async (t) => {
  const { broker } = await recordedGateway(t, { session: 'changed' });
  const health = await broker.health();
  assert.equal(health.status, 'disconnected');
  assert.equal(health.unreadable?.reason, 'auth-status');
});

test('a wording never seen, while the session is fine, costs one status check and one retry', async (t) => {
  const { sim, broker } = await setup(t);
  // A 5xx without a gateway body explains nothing: the status shows the session ready, the retry answers.
  sim.setFaults({ fault: 'http5xx', remaining: 1 });
  const { quotes, missing } = await broker.quotes(['MSFT']);
  assert.deepEqual(missing, []);
  assert.equal(typeof quotes.MSFT?.last, 'number');
  assert.equal(sim.gatewayCount('/iserver/auth/status'), 1);
  assert.equal(sim.gatewayCount('/iserver/secdef/search'), 2);
  assert.equal(sim.gatewayCount('/iserver/auth/ssodh/init'), 0, 'nothing to start');
});

test('a contract search that keeps failing is 503 with Retry-After, never cached: the symbol is found once the gateway answers', async (t) => {
  const { sim, broker } = await setup(t);
  sim.setFaults({ fault: 'http5xx' });
  await assert.rejects(broker.quotes(['MSFT']), (error: any) => {
    assert.equal(error.code, 'BROKER_UNAVAILABLE');
    assert.ok(error.retryAfterSeconds > 0);
    return true;
  });
  assert.equal(sim.gatewayCount('/iserver/secdef/search'), 2, 'one retry, no more');
  sim.clearFaults();
  assert.deepEqual((await broker.quotes(['MSFT'])).missing, []);
});

test('only a clean "No symbol found" makes a symbol unknown, and it is remembered', async (t) => {
  const { sim, broker } = await setup(t);
  assert.deepEqual((await broker.quotes(['NOSUCH'])).missing, ['NOSUCH']);
  assert.deepEqual((await broker.quotes(['NOSUCH'])).missing, ['NOSUCH']);
  assert.equal(sim.gatewayCount('/iserver/secdef/search'), 1);
  assert.equal(sim.gatewayCount('/iserver/auth/status'), 0, 'an answer about the input needs no status check');
});

test('a new session the gateway started by itself ("Please query /accounts first"): the accounts are read again, then the data comes', async (t) => {
  // /portfolio/accounts is paced at one call per 5.5 s; this test reads it twice in a row.
  const pacer = new RequestPacer({ ...ibkrPacerOptions(), spacing: {} });
  const { sim, broker } = await setup(t, { gateway: { pacer } }, { pacing: false });
  assert.equal(typeof (await broker.quotes(['MSFT'])).quotes.MSFT?.last, 'number');
  assert.ok((await broker.positions()).length > 0);
  sim.replaceSessionSilently();
  assert.equal(typeof (await broker.quotes(['MSFT'])).quotes.MSFT?.last, 'number');
  assert.equal(sim.gatewayCount('/iserver/accounts'), 2);
  assert.ok((await broker.positions()).length > 0);
  assert.equal(sim.gatewayCount('/portfolio/accounts'), 2, 'the account list read again before the positions');
  assert.equal(sim.gatewayCount('/iserver/auth/status'), 0, 'a known wording needs no status check');
});

test('health: logged in but not connected to IBKR\'s servers is disconnected; a status without "established" false is a session to start', async (t) => {
  const raw = recording('ibkr', 'auth-status-authenticated-2023').json as Record<string, unknown>;
  const offline = await recordedGateway(t, { ...raw, connected: false });
  const health = await offline.broker.health();
  assert.equal(health.status, 'disconnected');
  assert.match(health.message, /lost its connection to IBKR's servers/);
  // A gateway that says it outright: authenticated, but no brokerage session established.
  const unestablished = await recordedGateway(t, { ...raw, established: false });
  assert.equal((await unestablished.broker.health()).status, 'connected');
  assert.deepEqual(unestablished.recoveries, ['/iserver/auth/ssodh/init']);
});

test('health follows the data calls: unauthenticated while the status claims a session they refuse, connected as soon as they answer', async (t) => {
  const { sim, broker } = await setup(t, { gateway: { recoveryPollMs: 1, recoveryCooldownMs: 60_000 } });
  assert.equal((await broker.health()).status, 'connected');
  assert.equal(sim.gatewayCount('/iserver/accounts'), 1, 'data read once for the session');
  assert.equal((await broker.health()).status, 'connected');
  assert.equal(sim.gatewayCount('/iserver/accounts'), 1, 'and trusted after');

  sim.setSessionFaults({ refusal: 'no-bridge', unrecoverable: true, statusClaimsSession: true });
  sim.setSession('no_session');
  await assert.rejects(broker.quotes(['MSFT']), { code: 'BROKER_UNAVAILABLE' });
  assert.equal((await broker.health()).status, 'unauthenticated', 'the refused data call outweighs the status');

  // The competing session ends: the data calls answer again, within the recovery cooldown.
  sim.setSessionFaults({ unrecoverable: false, statusClaimsSession: false });
  sim.setSession('connected');
  const healed = await broker.health();
  assert.equal(healed.status, 'connected', healed.message);
  assert.equal(typeof (await broker.quotes(['MSFT'])).quotes.MSFT?.last, 'number');
});
