import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type IbkrSimulator, createIbkrSimulator } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { SimulatedUpstream } from '../../../src/sandbox/simulated-upstream.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../../../src/upstreams/ibkr/ibkr-broker.js';
import { recording } from '../../helpers/recorded.js';

async function setup(t: TestContext, options: Partial<IbkrBrokerOptions> = {}): Promise<{ sim: IbkrSimulator; broker: IbkrBroker }> {
  const sim = await createIbkrSimulator();
  await sim.listen();
  t.after(() => sim.close());
  const broker = new IbkrBroker({
    url: sim.baseUrl,
    tlsVerify: false,
    timeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    tickleIntervalMs: 0,
    ...options,
  });
  t.after(() => broker.close());
  return { sim, broker };
}

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

/** A gateway answering the auth status with `status` until a recovery call, then with the recorded authenticated one. */
async function recordedGateway(t: TestContext, status: unknown): Promise<{ broker: IbkrBroker; recoveries: string[] }> {
  const recoveries: string[] = [];
  const authenticated = recording('ibkr', 'auth-status-authenticated-2023').json;
  const gateway = new SimulatedUpstream({
    name: 'recorded-ibkr',
    handler: (req) => {
      const path = req.url.pathname.replace('/v1/api', '');
      if (path === '/iserver/auth/ssodh/init' || path === '/iserver/reauthenticate') {
        recoveries.push(path);
        return { status: 200, body: {} };
      }
      if (path === '/iserver/auth/status') return { status: 200, body: recoveries.length === 0 ? status : authenticated };
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
  return { broker, recoveries };
}

test('recorded status without a session (not connected, no "established"): a new brokerage session is started', async (t) => {
  const { broker, recoveries } = await recordedGateway(t, recording('ibkr', 'auth-status-not-authenticated').json);
  const health = await broker.health();
  assert.equal(health.status, 'connected', health.message);
  assert.deepEqual(recoveries, ['/iserver/auth/ssodh/init']);
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
