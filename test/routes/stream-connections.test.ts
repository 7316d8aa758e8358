// The stream's connection handling: limits, heartbeat, errors that keep the stream open, Last-Event-ID
// through a browser-compatible EventSource (the `eventsource` package), a client that never reads, shutdown.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { EventSource } from 'eventsource';
import { startApp } from '../helpers/app.js';
import { TcpProxy } from '../store/tcp-proxy.js';
import { eventually, SseClient } from '../stream/sse-client.js';
import { NO_FALLBACK, UNCAPPED } from '../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

test('limits: per caller (an address here) and per server, 429 before the stream, room again once one closes', async (t) => {
  const { url, app, scan } = await startApp(t, { env: { ...ANSWERS_ENV, STREAM_MAX_PER_CLIENT: '2', STREAM_MAX_CONNECTIONS: '3' } });
  const path = `${url}/api/stream?status=true`;
  const first = await SseClient.open(t, path);
  const second = await SseClient.open(t, path);
  assert.deepEqual([first.status, second.status], [200, 200]);
  const refused = await SseClient.open(t, path);
  assert.equal(refused.status, 429);
  assert.equal(JSON.parse(refused.body).error.code, 'RATE_LIMITED');
  assert.match(JSON.parse(refused.body).error.message, /at most 2 streams per caller/);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  first.close();
  await eventually(() => app.streamHub.stats().connections === 1, 'the closed stream to be gone');
  const line = scan.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'stream closed');
  // A caller on this machine is local: its status topic is the local view's.
  assert.deepEqual(line?.topics, ['status:local'], 'a closed stream leaves a log line with its topics');
  assert.equal(typeof line?.reqId, 'string');
  assert.equal((await SseClient.open(t, path)).status, 200);
});

test('the server-wide limit counts every address', async (t) => {
  const { url } = await startApp(t, { env: { ...ANSWERS_ENV, STREAM_MAX_PER_CLIENT: '0', STREAM_MAX_CONNECTIONS: '3' } });
  const path = `${url}/api/stream?status=true`;
  const open = await Promise.all([0, 1, 2].map(() => SseClient.open(t, path)));
  assert.deepEqual(
    open.map((s) => s.status),
    [200, 200, 200],
  );
  const refused = await SseClient.open(t, path);
  assert.equal(refused.status, 429);
  assert.match(JSON.parse(refused.body).error.message, /maximum of 3 streams/);
});

test('a comment heartbeat every STREAM_HEARTBEAT_SECONDS; a topic that cannot be served is an error event and the stream stays open', async (t) => {
  const { url, sandbox } = await startApp(t, { env: { ...ANSWERS_ENV, STREAM_HEARTBEAT_SECONDS: '1', BROKER: 'none' } });
  sandbox.alphaVantage.setFaults({ fault: 'http5xx', status: 503 });
  const stream = await SseClient.open(t, `${url}/api/stream?brokerQuotes=AAPL&quote=IBM&status=true`);
  await stream.until((s) => s.of('error').length >= 2 && s.of('status').length >= 1, 'two error events and a status');
  const errors = new Map(stream.of('error').map((e) => [JSON.parse(e.data).topic as string, JSON.parse(e.data)]));
  assert.equal(errors.get('brokerQuotes=AAPL')?.error.code, 'PROVIDER_NOT_CONFIGURED');
  assert.equal(errors.get('quote=IBM')?.error.code, 'UPSTREAM_ERROR');
  for (const body of errors.values()) assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'requestId', 'status']);
  const comments = stream.comments;
  await stream.until((s) => s.comments >= comments + 2, 'two heartbeats');
  assert.equal(stream.ended, false);
  // The upstream recovers: the poller's retry brings the value.
  sandbox.alphaVantage.setFaults({ fault: null });
  await stream.until((s) => s.of('quote').length === 1, 'the quote once provider A answers again', 30_000);
});

test('reconnecting with Last-Event-ID gets the current snapshot at once (a real EventSource through a cut connection)', async (t) => {
  const { url, app } = await startApp(t, { env: ANSWERS_ENV });
  const proxy = new TcpProxy(Number(new URL(url).port));
  await proxy.open();
  t.after(() => proxy.cut());
  const lastEventIds: (string | null)[] = [];
  const source = new EventSource(`http://127.0.0.1:${proxy.port}/api/stream?quote=IBM&overview=true`, {
    fetch: (input, init) => {
      lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      return fetch(input, init);
    },
  });
  t.after(() => source.close());
  const seen: { type: string; id: string; connection: number }[] = [];
  for (const type of ['quote', 'overview']) {
    source.addEventListener(type, (event) => seen.push({ type, id: (event as MessageEvent).lastEventId, connection: lastEventIds.length }));
  }
  await eventually(() => seen.length >= 2, 'the first snapshot');
  const lastId = seen.at(-1)!.id;
  await proxy.cut();
  await proxy.open();
  await eventually(() => lastEventIds.length === 2, 'the reconnect', 10_000);
  assert.equal(lastEventIds[1], lastId, 'the browser sends the id of the last event it saw');
  // Neither value changed (60 s fresh windows): what arrives is the snapshot sent on connect.
  await eventually(() => seen.filter((s) => s.connection === 2).length >= 2, 'the snapshot after the reconnect', 10_000);
  assert.deepEqual(
    seen
      .filter((s) => s.connection === 2)
      .map((s) => s.type)
      .sort(),
    ['overview', 'quote'],
  );
  assert.equal(app.streamHub.stats().topics, 2);
});

test('a client that never reads holds only the latest value per topic and is disconnected; the others are not held back', async (t) => {
  const { url, app } = await startApp(t, { env: { ...ANSWERS_ENV, STREAM_HEARTBEAT_SECONDS: '1' } });
  const reader = await SseClient.open(t, `${url}/api/stream?status=true`);
  const { port } = new URL(url);
  const stuck = connect(Number(port), '127.0.0.1');
  t.after(() => stuck.destroy());
  await once(stuck, 'connect');
  stuck.write('GET /api/stream?status=true HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
  stuck.pause();
  await eventually(() => app.streamHub.stats().connections === 2, 'both streams open');

  const frameBytes = 256 * 1024;
  const events = 40;
  let peak = 0;
  for (let n = 0; n < events; n += 1) {
    const data = JSON.stringify({ n, pad: 'x'.repeat(frameBytes) });
    // Both streams are local callers': their status topic is the local view's.
    app.streamHub.deliver({ topic: 'status:local', id: String(Date.now() + n), event: 'status', data, fingerprint: `injected-${n}` });
    peak = Math.max(peak, app.streamHub.stats().bufferedBytes);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await reader.until(
    (s) => s.of('status').some((e) => JSON.parse(e.data).n === events - 1),
    'the last injected event at the reading client',
  );
  const stats = app.streamHub.stats();
  t.diagnostic(`${events} events of ${frameBytes} bytes: peak held ${peak} bytes, dropped ${stats.dropped}, blocked ${stats.blocked}`);
  assert.equal(stats.blocked, 1, 'the silent client is blocked');
  assert.ok(stats.dropped > 0, 'intermediate values were dropped for it');
  assert.ok(peak < 5 * frameBytes, `held at most a few frames (${peak} bytes), not ${events * frameBytes}`);
  // Two heartbeat periods later the blocked socket is closed; the reader stays.
  await eventually(() => app.streamHub.stats().connections === 1, 'the silent client to be disconnected', 10_000);
  assert.equal(reader.ended, false);
});

test('shutdown ends every stream with a last event telling the browser to reconnect', async (t) => {
  const { url, app } = await startApp(t, { env: ANSWERS_ENV });
  const stream = await SseClient.open(t, `${url}/api/stream?status=true`);
  await stream.until((s) => s.of('status').length === 1, 'the first status');
  await app.close();
  await stream.until((s) => s.ended, 'the end of the stream');
  assert.equal(stream.events.at(-1)?.event, 'shutdown');
  assert.ok(stream.retry !== undefined && stream.retry < 3_000, `a short retry hint (${stream.retry} ms)`);
});
