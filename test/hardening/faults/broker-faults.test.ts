// Both brokers (IBKR gateway, Tastytrade) under every upstream fault: see fault-matrix.ts. Transport
// failures towards a broker read as 503 BROKER_UNAVAILABLE, as does an open circuit. IBKR's cold quote
// starts with the contract search, and a search that fails says nothing of the symbol: whatever the fault,
// 503 BROKER_UNAVAILABLE with Retry-After, never a symbol marked unknown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';
import { type Expected, type Family, type FaultName, runBreaker, runFault } from './fault-matrix.js';

const brokerExpect = (rateLimited: Expected, rateLimitedNoHeader: Expected): Record<FaultName, Expected> => ({
  'latency beyond the deadline': { status: 504, code: 'UPSTREAM_TIMEOUT' },
  'connection refused': { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true },
  'connection dropped before an answer': { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true },
  'connection reset mid-body': { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true },
  'body that never ends (slow drip)': { status: 504, code: 'UPSTREAM_TIMEOUT' },
  'truncated JSON': { status: 502, code: 'UPSTREAM_ERROR' },
  'HTML error page with status 200': { status: 502, code: 'UPSTREAM_ERROR' },
  'huge body (32 MiB)': { status: 502, code: 'UPSTREAM_ERROR' },
  '5xx burst': { status: 502, code: 'UPSTREAM_ERROR' },
  '429 with Retry-After': rateLimited,
  '429 without Retry-After': rateLimitedNoHeader,
  'flapping (fail, recover, fail)': { status: 502, code: 'UPSTREAM_ERROR' },
});

const isQuote = (res: { status: number; body: any }) => {
  assert.equal(res.status, 200);
  assert.equal(typeof res.body.quotes.AAPL.last, 'number');
};

const searchFailed: Expected = { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true };

// The matrix is about the snapshot path: with the real-time feed on, a symbol once asked is answered from
// the feed (X-Cache HIT, no broker call) and the feed's own REST calls race the REST path for the injected
// faults. The feed's faults have their own tests (test/upstreams/ibkr/ibkr-quote-stream.test.ts).
const ibkr: Family = {
  statusId: 'broker',
  env: { BROKER: 'ibkr', CACHE_BROKER_QUOTES_FRESH_SECONDS: '0', BROKER_STREAMING: 'off' },
  sim: (sandbox) => sandbox.ibkr,
  retarget: (config, replace) => ({
    ...config,
    broker: { ...config.broker, ibkr: { ...config.broker.ibkr, url: replace(config.broker.ibkr.url) } },
  }),
  path: '/api/broker/quotes?symbols=AAPL',
  otherKeyPath: '/api/broker/quotes?symbols=MSFT',
  otherPath: '/api/provider-a/quote?symbol=IBM',
  isGood: isQuote,
  // An unexplained /iserver failure costs a status check and one retry: the flap outlasts all three.
  flapRemaining: 3,
  expect: {
    ...(Object.fromEntries(Object.keys(brokerExpect(searchFailed, searchFailed)).map((fault) => [fault, searchFailed])) as Record<
      FaultName,
      Expected
    >),
    // The gateway's pacer backs off 5 s or more without Retry-After.
    '429 without Retry-After': { ...searchFailed, recovers: false },
  },
};

const tastytrade: Family = {
  ...ibkr,
  env: { BROKER: 'tastytrade', CACHE_BROKER_QUOTES_FRESH_SECONDS: '0', BROKER_STREAMING: 'off' },
  sim: (sandbox) => sandbox.tastytrade,
  retarget: (config, replace) => ({
    ...config,
    broker: { ...config.broker, tastytrade: { ...config.broker.tastytrade, url: replace(config.broker.tastytrade.url) } },
  }),
  expect: brokerExpect(
    { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true },
    { status: 503, code: 'BROKER_UNAVAILABLE', retryAfter: true },
  ),
  flapRemaining: undefined,
};

for (const [name, family] of [
  ['IBKR', ibkr],
  ['Tastytrade', tastytrade],
] as const) {
  for (const fault of Object.keys(family.expect) as FaultName[]) {
    test(`${name}, ${fault}`, (t) => runFault(t, family, fault));
  }
  test(`${name}, dead upstream: the circuit opens, fails fast with BROKER_UNAVAILABLE, then a probe closes it`, (t) =>
    runBreaker(t, family, { status: 503, code: 'BROKER_UNAVAILABLE' }));
}

test('IBKR: /api/broker/health reports the real state while the circuit is open, and a good check closes it', async (t) => {
  // The fault here is an instant 5xx: a roomy deadline keeps the paced cold path from turning it into a 504.
  const running = await startApp(t, { env: { BROKER: 'ibkr', UPSTREAM_TIMEOUT_MS: '3000' } });
  // A long cooldown, without jitter (which would spread it 48–60 s): only the health check can close the
  // circuit within this test, and Retry-After must be the cooldown's remainder, not a token second.
  running.app.deps.health.configureBreakers({ failureThreshold: 2, cooldownMs: 60_000, maxCooldownMs: 60_000, jitter: 0 });
  const gateway = running.sandbox.ibkr;
  gateway.setFaults({ fault: 'http5xx' });
  for (let i = 0; i < 2; i += 1) assert.equal((await running.get('/api/broker/quotes?symbols=AAPL')).status, 503);
  const open = await running.get('/api/broker/quotes?symbols=AAPL');
  assert.equal(open.body.error.code, 'BROKER_UNAVAILABLE');
  assert.ok(Number(open.headers['retry-after']) > 55, open.text);
  const status = await running.get('/api/system/status');
  const broker = status.body.upstreams.find((u: { id: string }) => u.id === 'broker');
  assert.equal(broker.circuit.state, 'open');
  assert.match(status.body.reason, /circuit open/);

  // The health check still asks the gateway: down now, then up as soon as the gateway is.
  const down = await running.get('/api/broker/health');
  assert.equal(down.body.status, 'disconnected');
  gateway.clearFaults();
  await new Promise((resolve) => setTimeout(resolve, 1_600)); // the health memo's window
  const up = await running.get('/api/broker/health');
  assert.equal(up.body.status, 'connected');
  const quotes = await running.get('/api/broker/quotes?symbols=AAPL');
  isQuote(quotes);
});
