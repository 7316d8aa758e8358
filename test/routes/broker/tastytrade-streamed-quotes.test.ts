// Broker quotes from Tastytrade's DXLink feed (BROKER=tastytrade, BROKER_STREAMING=auto), end to end
// against the simulated Tastytrade API: REST answered from the stream with no market data call once
// subscribed, the SSE topic pushed per tick, snapshots filling the gap while the feed is down with the
// viewer staying connected, and the feed's state in /api/system/status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MarketSession } from '../../../src/sandbox/ibkr/ibkr-market.js';
import { startApp } from '../../helpers/app.js';
import { busiestStocks } from '../../helpers/tastytrade-stream.js';
import { eventually, SseClient } from '../../stream/sse-client.js';

const MARKET_DATA = '/market-data/by-type';
const TASTY = { BROKER: 'tastytrade' };
const FAST = { keepaliveTimeoutSec: 2, acceptKeepaliveTimeoutSec: 2, backOffMs: { first: 100, max: 500 }, watchMs: 100 };

test('REST: a snapshot first, then the stream answers with no market data call; status shows the feed', async (t) => {
  const { get, sandbox } = await startApp(t, { env: TASTY, sandbox: { tastytrade: { sessionAt: () => 'regular' } } });
  const path = '/api/broker/quotes?symbols=AAPL,MSFT,BRK.B,NOSUCH';
  const first = await get(path);
  assert.equal(first.status, 200);
  assert.equal(first.headers['x-data-source'], 'broker-snapshot');
  assert.deepEqual(first.body.missing, ['NOSUCH']);
  await eventually(() => [...sandbox.tastytrade.stream.subscriptions()].length >= 3, 'subscribed upstream', 10_000);
  let streamed = first;
  for (let i = 0; i < 100 && streamed.headers['x-data-source'] !== 'broker-stream'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    streamed = await get(path);
  }
  assert.equal(streamed.headers['x-data-source'], 'broker-stream');
  assert.deepEqual(streamed.body.missing, ['NOSUCH']);
  for (const symbol of ['AAPL', 'MSFT', 'BRK.B']) {
    const quote = streamed.body.quotes[symbol];
    for (const field of ['last', 'bid', 'ask', 'bidSize', 'askSize', 'change', 'changePercent', 'volume'])
      assert.equal(typeof quote[field], 'number', `${symbol}.${field}`);
  }
  const calls = sandbox.tastytrade.count(MARKET_DATA);
  for (let i = 0; i < 20; i += 1) assert.equal((await get(path)).headers['x-data-source'], 'broker-stream');
  assert.equal(sandbox.tastytrade.count(MARKET_DATA), calls, 'no market data call once streamed');
  const status = (await get('/api/system/status')).body.brokerStream;
  assert.equal(status.broker, 'tastytrade');
  assert.equal(status.state, 'connected');
  assert.equal(status.available, true);
  assert.ok(status.subscriptions >= 3);
  assert.equal(sandbox.tastytrade.stream.openSockets, 1);
});

test('SSE: each tick pushed as it arrives; a refused feed is covered by snapshots, the viewer stays connected', async (t) => {
  let session: MarketSession = 'regular';
  const { url, sandbox, get } = await startApp(t, {
    env: TASTY,
    sandbox: { tastytrade: { sessionAt: () => session } },
    deps: { broker: { tastytradeStream: FAST } },
  });
  const [busy] = busiestStocks(sandbox.tastytrade) as [string];
  const viewer = await SseClient.open(t, `${url}/api/stream?brokerQuotes=${busy}`);
  await viewer.until((c) => c.of('brokerQuotes').length >= 12, 'a dozen events', 20_000);
  const events = viewer.of('brokerQuotes').slice(-8);
  for (const event of events) {
    const quote = JSON.parse(event.data).quotes[busy];
    assert.equal(Number(event.id?.split('-')[0]), Date.parse(quote.updatedAt), 'the event id starts with the tick time');
  }
  const span = (events.at(-1)?.at ?? 0) - (events[0]?.at ?? 0);
  assert.ok(span / (events.length - 1) < 1_000, `several events a second (${span} ms for ${events.length - 1})`);

  // The feed goes down (sockets dropped, AUTH refused): snapshots keep the panel current.
  sandbox.tastytrade.stream.faults.refuseAuth = true;
  sandbox.tastytrade.stream.dropAll();
  session = 'closed';
  const before = sandbox.tastytrade.count(MARKET_DATA);
  await eventually(() => sandbox.tastytrade.count(MARKET_DATA) > before + 1, 'snapshot polling during the gap', 10_000);
  const status = (await get('/api/system/status')).body.brokerStream;
  assert.equal(status.available, false);
  assert.match(status.lastError, /refused the quote token/);
  assert.equal(viewer.ended, false, 'the viewer stays connected');
  sandbox.tastytrade.stream.faults.refuseAuth = false;
  session = 'regular';
  await eventually(() => sandbox.tastytrade.stream.openSockets === 1, 'reconnected', 10_000);
  const resumed = viewer.of('brokerQuotes').length;
  await viewer.until((c) => c.of('brokerQuotes').length > resumed + 3, 'streamed events again', 10_000);
  const after = (await get('/api/system/status')).body.brokerStream;
  assert.equal(after.available, true);
  assert.ok(after.reconnects >= 1);
});

test('BROKER_STREAMING=off: no quote token, no socket; snapshots only', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...TASTY, BROKER_STREAMING: 'off' } });
  const res = await get('/api/broker/quotes?symbols=AAPL');
  assert.equal(res.headers['x-data-source'], 'broker-snapshot');
  assert.equal(sandbox.tastytrade.count('/api-quote-tokens'), 0);
  assert.equal(sandbox.tastytrade.stream.accepted, 0);
});
