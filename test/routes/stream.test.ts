// GET /api/stream with real clients on loopback: events parsed by a third-party SSE parser, upstream
// calls counted at the simulators, limits, heartbeat, a client that never reads, and shutdown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp } from '../helpers/app.js';
import { ALL_OF_THE_PRIVATE_SIDE, PRIVATE_SIDE_ENV, privateSideIn } from '../helpers/private-side.js';
import { eventually, SseClient } from '../stream/sse-client.js';

const SNAPSHOT = '/iserver/marketdata/snapshot';

test('one connection carries every topic: the current values at once, each exactly its GET body (a quote with its X-Data-Freshness inside)', async (t) => {
  const { url, get } = await startApp(t);
  // A page of the user's own dashboard (a loopback origin): broker topics are broker data.
  const stream = await SseClient.open(t, `${url}/api/stream?quote=ibm,MSFT&brokerQuotes=SPY,AAPL&overview=true&status=true`, {
    origin: 'http://localhost:5173',
  });
  assert.equal(stream.status, 200);
  assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
  assert.equal(stream.headers['access-control-allow-origin'], '*');
  assert.equal(stream.headers['cache-control'], 'no-store');
  assert.ok(stream.headers['x-request-id']);
  await stream.until(
    (s) => s.of('quote').length >= 2 && ['brokerQuotes', 'overview', 'status'].every((e) => s.of(e).length >= 1),
    'one event per topic',
  );
  assert.equal(stream.retry, 3_000);

  const quotes = new Map(stream.of('quote').map((e) => [JSON.parse(e.data)['Global Quote']['01. symbol'] as string, JSON.parse(e.data)]));
  assert.deepEqual([...quotes.keys()].sort(), ['IBM', 'MSFT']);
  for (const [symbol, { freshness, ...body }] of quotes) {
    const answer = await get(`/api/provider-a/quote?symbol=${symbol}`);
    assert.deepEqual(body, answer.body);
    // An event has no headers: what the GET's X-Data-Freshness says is beside the body.
    const { kind, delayMinutes, asOf } = freshness as { kind: string; delayMinutes?: number; asOf: string };
    assert.equal(
      answer.headers['x-data-freshness'],
      `${kind}${delayMinutes === undefined ? '' : `; minutes=${delayMinutes}`}; as-of=${asOf}`,
    );
  }
  assert.deepEqual(JSON.parse(stream.of('overview')[0]!.data), (await get('/api/market/overview')).body);
  // Broker quotes move every second: the GET right after an event answers from the same cache entry.
  let same = false;
  for (let i = 0; i < 3 && !same; i += 1) {
    const seen = stream.of('brokerQuotes').length;
    await stream.until((s) => s.of('brokerQuotes').length > seen || i === 0, 'a broker quotes event');
    const rest = (await get('/api/broker/quotes?symbols=AAPL,SPY')).body;
    same = JSON.stringify(rest) === stream.of('brokerQuotes').at(-1)!.data;
  }
  assert.ok(same, 'a brokerQuotes event equals the /api/broker/quotes body');
  assert.deepEqual(Object.keys(JSON.parse(stream.of('status')[0]!.data)).slice(0, 3), ['status', 'reason', 'reasons']);

  // Every id is unique and starts with when the upstream answered (the cache entry's time).
  const ids = stream.events.map((e) => e.id ?? '');
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^\d{13}-\d+$/);
  const quoteAt = Number(stream.of('quote')[0]!.id!.split('-')[0]);
  const age = Number((await get('/api/provider-a/quote?symbol=IBM')).headers.age);
  assert.ok(Math.abs(Date.now() - quoteAt - age * 1000) < 2_000, 'the id tells the age of the value, as Age does');
});

test('bad or missing topics and too many symbols: the JSON error before any stream', async (t) => {
  const { url } = await startApp(t);
  const cases: [string, number, string, RegExp][] = [
    ['', 400, 'MISSING_PARAMETER', /no topic/],
    ['?overview=false', 400, 'MISSING_PARAMETER', /no topic/],
    ['?quotes=IBM', 400, 'INVALID_PARAMETER', /unknown parameter: quotes/],
    ['?quote=IBM,$$$', 400, 'INVALID_PARAMETER', /quote: "\$\$\$" is not a valid symbol/],
    ['?quote=,', 400, 'MISSING_PARAMETER', /quote is required/],
    [`?quote=${Array.from({ length: 11 }, (_, i) => `S${i}`).join(',')}`, 400, 'INVALID_PARAMETER', /at most 10 symbols/],
    [
      `?brokerQuotes=${Array.from({ length: 51 }, (_, i) => `S${i}`).join(',')}`,
      400,
      'INVALID_PARAMETER',
      /brokerQuotes: at most 50 symbols/,
    ],
    ['?status=maybe', 400, 'INVALID_PARAMETER', /status/],
  ];
  for (const [query, status, code, message] of cases) {
    const res = await SseClient.open(t, `${url}/api/stream${query}`);
    assert.equal(res.status, status, query);
    assert.match(String(res.headers['content-type']), /^application\/json/, query);
    const body = JSON.parse(res.body);
    assert.equal(body.error.code, code, query);
    assert.match(body.error.message, message, query);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  }
});

test('one poll per topic whatever the number of viewers, counted at the simulator; no viewers, no polling', async (t) => {
  // The polled topic: broker quotes as snapshots (streamed ones are test/routes/broker/streamed-quotes.test.ts's).
  const { url, app, sandbox } = await startApp(t, { env: { STREAM_MAX_PER_CLIENT: '0', BROKER_STREAMING: 'off' } });
  const path = `${url}/api/stream?brokerQuotes=AAPL,MSFT,SPY`;
  const snapshots = () => sandbox.ibkr.gatewayCount(SNAPSHOT);

  /** Upstream snapshot calls while every client receives `events` further brokerQuotes events. */
  const callsFor = async (clients: SseClient[], events: number): Promise<number> => {
    await Promise.all(clients.map((c) => c.until((s) => s.of('brokerQuotes').length >= 1, 'the first event')));
    const before = snapshots();
    const start = clients.map((c) => c.of('brokerQuotes').length);
    await Promise.all(clients.map((c, i) => c.until((s) => s.of('brokerQuotes').length >= start[i]! + events, `${events} more events`)));
    return snapshots() - before;
  };

  const one = await SseClient.open(t, path);
  const single = await callsFor([one], 4);
  const many = await Promise.all(Array.from({ length: 60 }, () => SseClient.open(t, path)));
  assert.equal(app.streamHub.stats().topics, 1);
  const fanned = await callsFor([one, ...many], 4);
  t.diagnostic(`snapshot calls for 4 events: 1 viewer ${single}, 61 viewers ${fanned}`);
  assert.ok(single >= 4, `one viewer: ${single} snapshot calls`);
  assert.ok(fanned <= single + 2, `61 viewers cost ${fanned} snapshot calls, one viewer ${single}`);

  // Every viewer saw the same events (same ids), framed once.
  const lastId = one.of('brokerQuotes').at(-1)!.id;
  await Promise.all(many.map((c) => c.until((s) => s.events.some((e) => e.id === lastId), 'the same event')));

  for (const client of [one, ...many]) client.close();
  await eventually(() => app.streamHub.stats().connections === 0, 'every stream closed');
  assert.equal(app.streamHub.stats().topics, 0, 'the topic and its poller are gone');
  const after = snapshots();
  await sleep(2_500);
  assert.equal(snapshots(), after, 'no polling without viewers');
});

test('the stream is in the OpenAPI document: operationId, topics, an event-stream 200 and the shared error bodies', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body;
  const op = doc.paths['/api/stream']?.get;
  assert.equal(op?.operationId, 'stream');
  assert.deepEqual(op.parameters.map((p: { name: string }) => p.name).sort(), ['brokerQuotes', 'overview', 'quote', 'status', 'ticket']);
  assert.ok(op.responses['200'].content['text/event-stream']);
  for (const status of ['400', '401', '403', '429'])
    assert.equal(op.responses[status].content['application/json'].schema.$ref, '#/components/schemas/ErrorResponse');
  for (const event of ['quote', 'brokerQuotes', 'overview', 'status', 'error', 'shutdown'])
    assert.match(op.description, new RegExp(`\`${event}\``));
});

test('provider-A quotes: however many viewers, the stream spends no more than the budget allows, and a refusal keeps the last value', async (t) => {
  const { url, sandbox } = await startApp(t, {
    env: {
      ALPHA_VANTAGE_CALLS_PER_MINUTE: '3',
      ALPHA_VANTAGE_CALLS_PER_DAY: '500',
      CACHE_QUOTE_FRESH_SECONDS: '1',
      STREAM_MAX_PER_CLIENT: '0',
    },
  });
  const calls = () => sandbox.alphaVantage.count('/query');
  const viewers = await Promise.all(Array.from({ length: 20 }, () => SseClient.open(t, `${url}/api/stream?quote=IBM,MSFT`)));
  await Promise.all(viewers.map((v) => v.until((s) => s.of('quote').length >= 2, 'both quotes')));
  // Fresh for 1 s, so the pollers ask again each second until the minute's 3 calls are spent.
  await eventually(() => calls() >= 3, 'the minute budget to be spent', 10_000);
  await sleep(2_500);
  assert.equal(calls(), 3, 'no call beyond the budget, for 20 viewers of 2 symbols');
  // The refused refreshes answer the stale value: nothing changed, so no event and no error event.
  for (const viewer of viewers) {
    assert.equal(viewer.of('error').length, 0);
    assert.equal(viewer.ended, false);
  }
});

test("the status topic: an outsider's stream never carries the local view and a local viewer's always does, side by side on one server", async (t) => {
  // Behind a proxy on loopback that TRUST_PROXY names: X-Forwarded-For plays the caller.
  const running = await startApp(t, { transport: 'socket', env: { ...PRIVATE_SIDE_ENV, TRUST_PROXY: '127.0.0.1' } });
  const outsider = { 'x-forwarded-for': '203.0.113.9' };
  const open = (headers: Record<string, string>) => SseClient.open(t, `${running.url}/api/stream?status=true`, headers);
  // An outsider first (its topic started), a local viewer beside it, another outsider after.
  const viewers = [
    { local: false, stream: await open(outsider) },
    { local: true, stream: await open({}) },
    { local: false, stream: await open({ ...outsider, origin: 'https://evil.example' }) },
  ];
  await Promise.all(viewers.map(({ stream }) => stream.until((s) => s.of('status').length >= 1, 'a first status')));
  // A provider call changes both views: each is sent again.
  assert.equal((await running.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  await Promise.all(viewers.map(({ stream }) => stream.until((s) => s.of('status').length >= 2, 'a changed status')));
  for (const { local, stream } of viewers) {
    for (const event of stream.of('status'))
      assert.deepEqual(privateSideIn(event.data), local ? ALL_OF_THE_PRIVATE_SIDE : [], `${local ? 'local' : 'outsider'}: ${event.data}`);
    const last = JSON.parse(stream.of('status').at(-1)!.data);
    assert.equal(last.upstreams.find((u: { id: string }) => u.id === 'provider-a').calls, 1, 'the changed figures reach both');
  }
});
