import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type IbkrSimulator, createIbkrSimulator } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../../../src/upstreams/ibkr/ibkr-broker.js';

async function setup(t: TestContext, options: Partial<IbkrBrokerOptions> = {}): Promise<{ sim: IbkrSimulator; broker: IbkrBroker }> {
  const sim = await createIbkrSimulator();
  await sim.listen();
  t.after(() => sim.close());
  const broker = new IbkrBroker({ url: sim.baseUrl, tlsVerify: false, timeoutMs: 5_000, logger: pino({ level: 'silent' }), tickleIntervalMs: 0, ...options });
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
