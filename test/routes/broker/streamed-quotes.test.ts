// Broker quotes from the broker's real-time feed (BROKER_STREAMING=auto), end to end against the
// simulated IBKR gateway: REST answered from the stream with no snapshot call once subscribed, the same
// meaning as a snapshot, completion by a snapshot, the REST retention, the SSE topic pushed per tick, and
// snapshots filling the gap while the feed is down, viewers staying connected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contractBySymbol } from '../../../src/sandbox/ibkr/ibkr-contracts.js';
import type { MarketSession } from '../../../src/sandbox/ibkr/ibkr-market.js';
import { firstFrameOmitsSizes, sendsBareFirstFrame } from '../../../src/sandbox/ibkr/ibkr-stream-server.js';
import { UNIVERSE } from '../../../src/sandbox/universe.js';
import { startApp } from '../../helpers/app.js';
import { busiestSymbols } from '../../helpers/ibkr-socket.js';
import { eventually, SseClient } from '../../stream/sse-client.js';

const SNAPSHOT = '/iserver/marketdata/snapshot';
const symbols = UNIVERSE.map((i) => i.symbol).filter((s) => contractBySymbol(s) !== undefined);
/** Symbols whose first frame is whole, so the stream answers them at once. */
const WHOLE = symbols.filter((s) => !sendsBareFirstFrame(contractBySymbol(s)!) && !firstFrameOmitsSizes(contractBySymbol(s)!)).slice(0, 3);
const WITHOUT_SIZES = symbols.find((s) => firstFrameOmitsSizes(contractBySymbol(s)!))!;
/** The quotes' values and what they are, without the times (of the tick, and the freshness's as-of). */
const withoutTime = (quotes: Record<string, Record<string, unknown>>) =>
  Object.fromEntries(
    Object.entries(quotes).map(([symbol, { updatedAt: _, freshness, ...rest }]) => {
      const { asOf: _asOf, ...what } = freshness as Record<string, unknown>;
      return [symbol, { ...rest, freshness: what }];
    }),
  );

test('REST: the first answer is a snapshot, then the stream answers with no broker call; the header is exposed through CORS', async (t) => {
  const { get, sandbox } = await startApp(t, { sandbox: { ibkr: { sessionAt: () => 'closed' } } });
  const path = `/api/broker/quotes?symbols=${[...WHOLE, 'NOSUCH'].join(',')}`;
  const first = await get(path);
  assert.equal(first.status, 200);
  assert.equal(first.headers['x-data-source'], 'broker-snapshot');
  assert.deepEqual(first.body.missing, ['NOSUCH']);
  let streamed = first;
  for (let i = 0; i < 50 && streamed.headers['x-data-source'] !== 'broker-stream'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    streamed = await get(path);
  }
  assert.equal(streamed.headers['x-data-source'], 'broker-stream');
  // A streamed quote and a snapshot quote mean the same: the market is closed, so the values are equal, and
  // both frozen (the account has real-time data: "ZB", as recorded on a Saturday).
  assert.deepEqual(withoutTime(streamed.body.quotes), withoutTime(first.body.quotes));
  for (const quote of Object.values(streamed.body.quotes as Record<string, { freshness: unknown }>))
    assert.deepEqual(
      { ...(quote.freshness as object), asOf: undefined },
      { kind: 'frozen', market: 'closed', feed: 'realtime', asOf: undefined },
    );
  assert.deepEqual(streamed.body.missing, ['NOSUCH']);
  const calls = sandbox.ibkr.gatewayCount(SNAPSHOT);
  for (let i = 0; i < 20; i += 1) assert.equal((await get(path)).headers['x-data-source'], 'broker-stream');
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), calls, 'no snapshot call once streamed');
  const cors = await get(path, { origin: 'http://localhost:5173' });
  assert.match(String(cors.headers['access-control-expose-headers']), /X-Data-Source/);
  assert.equal(sandbox.ibkr.stream.openSockets, 1);
});

test('a stream that has not sent every field is completed from a snapshot: its sizes and volume', async (t) => {
  const { get, sandbox } = await startApp(t, { sandbox: { ibkr: { sessionAt: () => 'closed' } } });
  const path = `/api/broker/quotes?symbols=${WITHOUT_SIZES}`;
  const first = await get(path);
  assert.equal(first.headers['x-data-source'], 'broker-snapshot');
  let later = first;
  for (let i = 0; i < 50 && later.headers['x-data-source'] !== 'broker-stream'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    later = await get(path);
  }
  assert.equal(later.headers['x-data-source'], 'broker-stream', 'completed by the first snapshot, then streamed');
  const quote = later.body.quotes[WITHOUT_SIZES];
  assert.equal(quote.volume, first.body.quotes[WITHOUT_SIZES].volume);
  assert.equal(quote.bidSize, first.body.quotes[WITHOUT_SIZES].bidSize);
  assert.equal(sandbox.ibkr.gatewayCount(SNAPSHOT), 2, 'the subscribing snapshot and its warm-up, nothing after');
});

test('a symbol asked over REST stays subscribed for the retention after its last request, then is unsubscribed', async (t) => {
  const { get, sandbox } = await startApp(t, {
    sandbox: { ibkr: { sessionAt: () => 'closed' } },
    deps: { broker: { streaming: { retentionMs: 800, renewMs: 100 } } },
  });
  await get(`/api/broker/quotes?symbols=${WHOLE[0]}`);
  const conid = contractBySymbol(WHOLE[0]!)!.conid;
  await eventually(() => [...sandbox.ibkr.stream.subscriptions()].includes(conid), 'subscribed', 5_000);
  await eventually(() => ![...sandbox.ibkr.stream.subscriptions()].includes(conid), 'unsubscribed after the retention', 5_000);
});

test('SSE: each tick pushed as it arrives, updatedAt the tick time; snapshots fill a gap, viewers stay connected', async (t) => {
  let session: MarketSession = 'regular';
  const { url, sandbox, get } = await startApp(t, {
    sandbox: { ibkr: { sessionAt: () => session, stream: { heartbeatMs: 200 } } },
    deps: { broker: { ibkrStream: { heartbeatTimeoutMs: 1_000, backOffMs: { first: 100, max: 500 }, watchMs: 100 } } },
  });
  const [busy] = busiestSymbols(sandbox.ibkr) as [string];
  const viewer = await SseClient.open(t, `${url}/api/stream?brokerQuotes=${busy}`);
  await viewer.until((c) => c.of('brokerQuotes').length >= 12, 'a dozen events', 20_000);
  const events = viewer.of('brokerQuotes').slice(-8);
  for (const event of events) {
    const quote = JSON.parse(event.data).quotes[busy];
    assert.equal(Number(event.id?.split('-')[0]), Date.parse(quote.updatedAt), 'the event id starts with the tick time');
  }
  const span = events.at(-1)!.at - events[0]!.at;
  assert.ok(span / (events.length - 1) < 1_000, `several events a second (${span} ms for ${events.length - 1})`);

  // The feed goes down (sockets dropped, upgrades refused): snapshots keep the viewer's panel current.
  sandbox.ibkr.stream.faults.refuseUpgrade = true;
  sandbox.ibkr.stream.dropAll();
  session = 'closed';
  const snapshotsBefore = sandbox.ibkr.gatewayCount(SNAPSHOT);
  await eventually(() => sandbox.ibkr.gatewayCount(SNAPSHOT) > snapshotsBefore + 1, 'snapshot polling during the gap', 10_000);
  const status = (await get('/api/system/status')).body.brokerStream;
  assert.equal(status.available, false);
  assert.match(status.lastError, /refused the websocket/);
  assert.equal(viewer.ended, false, 'the viewer stays connected');
  sandbox.ibkr.stream.faults.refuseUpgrade = false;
  session = 'regular';
  await eventually(() => sandbox.ibkr.stream.openSockets === 1, 'reconnected', 10_000);
  const resumed = viewer.of('brokerQuotes').length;
  await viewer.until((c) => c.of('brokerQuotes').length > resumed + 3, 'streamed events again', 10_000);
  const after = (await get('/api/system/status')).body.brokerStream;
  assert.equal(after.available, true);
  assert.ok(after.reconnects >= 1);
  assert.equal(after.role, 'local');
});
