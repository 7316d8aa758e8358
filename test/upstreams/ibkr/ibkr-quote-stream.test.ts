// IbkrQuoteStream against the simulated gateway over TLS on loopback: authorisation by cookie or session
// value, subscriptions merged into quotes, tic, renewals, the re-request of a silent symbol, and every
// fault reconnecting with back-off. Timings are shortened; the defaults are the production ones.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import type { StreamedQuote } from '../../../src/broker/quote-stream.js';
import { SESSION_REFUSALS, type SessionRefusalName } from '../../../src/sandbox/ibkr/ibkr-session-faults.js';
import { createIbkrSimulator, type IbkrSimulator, type IbkrSimulatorOptions } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { IbkrBroker } from '../../../src/upstreams/ibkr/ibkr-broker.js';
import { IbkrQuoteStream, type IbkrQuoteStreamOptions } from '../../../src/upstreams/ibkr/ibkr-quote-stream.js';
import { busiestSymbols } from '../../helpers/ibkr-socket.js';
import { eventually } from '../../stream/sse-client.js';

const logger = pino({ level: 'silent' });

interface Setup {
  sim: IbkrSimulator;
  broker: IbkrBroker;
  stream: IbkrQuoteStream;
  updates: StreamedQuote[];
}

async function setup(
  t: TestContext,
  options: { sim?: IbkrSimulatorOptions; stream?: Partial<IbkrQuoteStreamOptions>; cookies?: boolean } = {},
): Promise<Setup> {
  const sim = await createIbkrSimulator({ pacing: false, sessionAt: () => 'regular', stream: { heartbeatMs: 100 }, ...options.sim });
  await sim.listen();
  const broker = new IbkrBroker({
    url: sim.baseUrl,
    tlsVerify: false,
    timeoutMs: 2_000,
    logger,
    tickleIntervalMs: 0,
    gateway: { recoveryCooldownMs: 0 },
  });
  // A gateway whose cookies the client does not pass (a proxy in between strips them): the session value path.
  const session =
    options.cookies === false
      ? {
          streamSession: async (o?: { verify?: boolean }) => ({ ...(await broker.streamSession(o)), cookies: undefined }),
          conid: (s: string) => broker.conid(s),
        }
      : broker;
  const stream = new IbkrQuoteStream({
    url: sim.baseUrl,
    tlsVerify: false,
    session,
    logger,
    heartbeatTimeoutMs: 1_000,
    backOffMs: { first: 50, max: 400 },
    watchMs: 50,
    authTimeoutMs: 1_000,
    ...options.stream,
  });
  const updates: StreamedQuote[] = [];
  stream.onQuote((u) => updates.push(u));
  t.after(async () => {
    await stream.close();
    await broker.close();
    await sim.close();
  });
  return { sim, broker, stream, updates };
}

test('cookie authorisation, one smd per conid with the snapshot fields, frames merged into complete quotes, unknown symbols ignored', async (t) => {
  const { sim, stream, updates } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL', 'MSFT', 'NOSUCH']);
  await eventually(() => stream.latest('AAPL')?.complete === true && stream.latest('MSFT')?.complete === true, 'complete quotes', 5_000);
  assert.equal(stream.latest('NOSUCH'), undefined);
  assert.equal(sim.stream.subscribeRequests, 2);
  const aapl = stream.latest('AAPL')!;
  for (const field of ['last', 'bid', 'ask', 'bidSize', 'askSize', 'change', 'changePercent', 'volume'] as const)
    assert.equal(typeof aapl.quote[field], 'number', field);
  assert.equal(aapl.quote.updatedAt, new Date(aapl.tickAt).toISOString(), 'updatedAt is the tick time');
  assert.ok(updates.every((u) => u.symbol === 'AAPL' || u.symbol === 'MSFT'));
  assert.deepEqual(
    { ...stream.status(), lastTickAgeMs: null },
    {
      broker: 'ibkr',
      state: 'connected',
      subscriptions: 2,
      lastTickAgeMs: null,
      reconnects: 0,
      lastError: null,
    },
  );
  assert.equal(sim.stream.accepted, 1);
});

test('without the cookie the session value answers "waiting for session"', async (t) => {
  const { stream } = await setup(t, { cookies: false });
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => stream.latest('AAPL') !== undefined, 'a quote over the session value', 5_000);
});

test('tic at least every tic period; every subscription requested again every renewal period; umd when unsubscribed', async (t) => {
  const { sim, stream } = await setup(t, { stream: { ticMs: 200, resubscribeMs: 400 } });
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => stream.status().state === 'connected', 'connected', 5_000);
  const requested = sim.stream.subscribeRequests;
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  assert.ok(sim.stream.ticsReceived >= 5, `tics: ${sim.stream.ticsReceived}`);
  assert.ok(sim.stream.subscribeRequests - requested >= 2, `renewals: ${sim.stream.subscribeRequests - requested}`);
  stream.unsubscribe(['AAPL']);
  await eventually(() => [...sim.stream.subscriptions()].length === 0, 'umd', 2_000);
});

test('a subscription that expired silently (the heartbeat going on) is requested again once the symbol stays silent', async (t) => {
  const { sim, stream, updates } = await setup(t, {
    sim: { sessionAt: () => 'regular', stream: { heartbeatMs: 100, subscriptionTtlMs: 800 } },
    stream: { marketOpen: () => true, stall: { gaps: 8, minMs: 300 }, resubscribeMs: 600_000 },
  });
  const [symbol] = busiestSymbols(sim) as [string];
  stream.start();
  stream.subscribe([symbol]);
  await eventually(() => updates.length > 3, 'ticks', 5_000);
  const before = sim.stream.subscribeRequests;
  await eventually(() => sim.stream.subscribeRequests > before, 'smd sent again after the silence', 5_000);
  const resumed = updates.length;
  await eventually(() => updates.length > resumed + 2, 'ticks again', 5_000);
  assert.equal(stream.status().reconnects, 0, 'the socket stayed: only the subscription was renewed');
});

test('faults reconnect with back-off: dropped socket, refused upgrade, refused session, silent heartbeat, lost session', async (t) => {
  const { sim, stream } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL']);
  const connected = () => eventually(() => stream.status().state === 'connected', 'connected', 8_000);
  await connected();

  sim.stream.dropAll();
  await eventually(() => stream.status().reconnects >= 1, 'a reconnect after a drop', 5_000);
  await connected();

  sim.stream.faults.refuseUpgrade = true;
  sim.stream.dropAll();
  await eventually(() => /HTTP 503/.test(stream.status().lastError ?? ''), 'the refusal seen', 5_000);
  sim.stream.faults.refuseUpgrade = false;
  await connected();

  sim.stream.faults.refuseSession = true;
  sim.stream.dropAll();
  await eventually(() => stream.status().state === 'unauthenticated', 'unauthenticated', 5_000);
  sim.stream.faults.refuseSession = false;
  await connected();

  sim.stream.faults.silent = true;
  await eventually(() => /no heartbeat/.test(stream.status().lastError ?? ''), 'heartbeat silence seen', 5_000);
  sim.stream.faults.silent = false;
  await connected();

  // The brokerage session is lost under the socket: the next connection gets it back through REST recovery.
  sim.loseSessionSilently();
  await eventually(() => stream.status().state !== 'connected', 'the lost session seen', 5_000);
  await connected();
  assert.equal(sim.session, 'connected', 'recovered by ssodh/init');
  assert.equal(sim.stream.openSockets, 1, 'one socket at a time');
});

test("IBKR_TLS_VERIFY on against the gateway's self-signed certificate: refused, said so", async (t) => {
  const { stream } = await setup(t, { stream: { tlsVerify: true } });
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => /TLS certificate was refused/.test(stream.status().lastError ?? ''), 'the TLS refusal', 5_000);
  assert.notEqual(stream.status().state, 'connected');
});

test('a symbol whose conid could not be looked up (gateway logged out) is looked up again and streamed once it can be', async (t) => {
  const { sim, stream } = await setup(t, { stream: { lookupRetryMs: 200 } });
  sim.setSession('logged_out');
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => sim.gatewayCount('/iserver/secdef/search') > 0 && stream.status().lastError !== null, 'the failure seen', 5_000);
  sim.setSession('connected');
  await eventually(() => stream.latest('AAPL') !== undefined, 'streamed after the retry', 10_000);
});

test('a socket with nothing subscribed is closed after the idle time', async (t) => {
  const { sim, stream } = await setup(t, { stream: { idleMs: 200 } });
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => stream.status().state === 'connected', 'connected', 5_000);
  stream.unsubscribe(['AAPL']);
  await eventually(() => sim.stream.openSockets === 0, 'the idle socket closed', 3_000);
});

// The recorded refusals: the session lost under the socket, whatever the wording of the data calls'
// refusal, and even while the tickle and auth status claim the session is there (users report both), the
// socket's next connection has the session mended through the same classifier as REST and streams again.
for (const refusal of Object.keys(SESSION_REFUSALS) as SessionRefusalName[]) {
  test(`a session lost under the socket, data refused as "${refusal}" while the tickle claims the session: mended, streaming again`, async (t) => {
    const { sim, stream } = await setup(t);
    stream.start();
    stream.subscribe(['AAPL']);
    await eventually(() => stream.status().state === 'connected', 'connected', 8_000);
    sim.setSessionFaults({ refusal, statusClaimsSession: true });
    const recoveries = () => sim.gatewayCount('/iserver/auth/ssodh/init') + sim.gatewayCount('/iserver/reauthenticate');
    const before = recoveries();
    sim.loseSessionSilently();
    await eventually(() => stream.status().state !== 'connected', 'the lost session seen', 5_000);
    await eventually(() => stream.status().state === 'connected', 'connected again', 8_000);
    assert.equal(sim.session, 'connected');
    assert.ok(recoveries() > before, 'the refusal had the session started (ssodh/init) or re-authenticated');
    const at = stream.latest('AAPL')?.tickAt ?? 0;
    await eventually(() => (stream.latest('AAPL')?.tickAt ?? 0) > at, 'ticks again', 5_000);
  });
}

test('a session that cannot be started: the socket is not opened, the state says why, and it streams once the session is back', async (t) => {
  const { sim, stream } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => stream.status().state === 'connected', 'connected', 8_000);
  sim.setSessionFaults({ unrecoverable: true });
  sim.loseSessionSilently();
  await eventually(() => /no brokerage session/.test(stream.status().lastError ?? ''), 'the session refusal said', 5_000);
  assert.equal(stream.status().state, 'unauthenticated');
  sim.setSessionFaults({ unrecoverable: false });
  await eventually(() => stream.status().state === 'connected', 'connected once the session can be started', 10_000);
});
