// A stream client on a real HTTP server on loopback: frames written to the socket as chunks of the
// response, as ServerResponse would frame them (read back by Node's HTTP client and a third-party SSE
// parser), raw for an HTTP/1.0 client, through the response while it waits behind a pipelined one; and a
// reader that stops reading holds the latest frame only, and gets it once it reads again.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Frame, StreamClient } from '../../src/stream/stream-client.js';
import { addressCaller } from '../../src/core/caller.js';

/** A server whose `/stream` responses become stream clients, handed to the test. */
async function server(t: TestContext, other?: (res: ServerResponse) => void) {
  const clients: StreamClient[] = [];
  const waiting: ((client: StreamClient) => void)[] = [];
  const http = createServer((req, res) => {
    if (req.url !== '/stream') return other?.(res);
    const client = new StreamClient(res, { caller: addressCaller('127.0.0.1'), slowClientMs: 60_000, retryMs: 3_000 });
    client.open({});
    const next = waiting.shift();
    if (next === undefined) clients.push(client);
    else next(client);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  t.after(() => {
    http.closeAllConnections();
    http.close();
  });
  const { port } = http.address() as { port: number };
  return {
    port,
    /** The stream client of the next (or last unclaimed) `/stream` request. */
    client: () => new Promise<StreamClient>((resolve) => (clients.length > 0 ? resolve(clients.shift()!) : waiting.push(resolve))),
  };
}

test("a stream's socket drops the server's idle timeout, which its heartbeat and the slow-client rule make redundant and each write refreshed", async (t) => {
  const http = createServer((_req, res) =>
    new StreamClient(res, { caller: addressCaller('127.0.0.1'), slowClientMs: 60_000, retryMs: 3_000 }).open({}),
  );
  http.setTimeout(30_000);
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  t.after(() => {
    http.closeAllConnections();
    http.close();
  });
  const [socket] = await Promise.all([
    once(http, 'connection').then(([s]) => s as Socket),
    (async () => {
      const req = request({ port: (http.address() as { port: number }).port, host: '127.0.0.1', path: '/stream' });
      req.end();
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      t.after(() => res.destroy());
    })(),
  ]);
  assert.equal(socket.timeout, 0);
});

const frame = (id: string, data: string) => new Frame(`id: ${id}\nevent: status\ndata: ${data}\n\n`);

test('frames reach an HTTP/1.1 reader as the chunks of the response, in order', async (t) => {
  const { port, client } = await server(t);
  const req = request({ port, host: '127.0.0.1', path: '/stream' });
  req.end();
  const stream = await client();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  t.after(() => res.destroy());
  assert.equal(res.headers['transfer-encoding'], 'chunked');
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => parser.feed(chunk));
  for (let n = 1; n <= 3; n += 1) stream.send('status', frame(String(n), JSON.stringify({ n, pad: 'é'.repeat(n * 1000) })));
  stream.heartbeat(Date.now());
  stream.end('event: shutdown\ndata: {}\n\n');
  await once(res, 'end');
  assert.deepEqual(
    events.map((e) => [e.id, e.event]),
    [
      ['1', 'status'],
      ['2', 'status'],
      ['3', 'status'],
      [undefined, 'shutdown'],
    ],
  );
  assert.equal(JSON.parse(events[2]!.data).pad.length, 3000);
});

test('an HTTP/1.0 reader gets the frames as they are, the body ending with the connection', async (t) => {
  const { port, client } = await server(t);
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write('GET /stream HTTP/1.0\r\n\r\n');
  const stream = await client();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  stream.send('status', frame('1', '{}'));
  stream.end('event: shutdown\ndata: {}\n\n');
  await once(socket, 'end');
  assert.doesNotMatch(text, /transfer-encoding/i);
  assert.equal(text.slice(text.indexOf('\r\n\r\n') + 4), 'retry: 3000\n\nid: 1\nevent: status\ndata: {}\n\nevent: shutdown\ndata: {}\n\n');
});

test('a stream pipelined behind another response: its frames wait in the response, then follow in order', async (t) => {
  let slow: ServerResponse | undefined;
  const { port, client } = await server(t, (res) => (slow = res));
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
  const stream = await client();
  stream.send('status', frame('1', '"queued"'));
  assert.ok(slow !== undefined);
  slow.end('first');
  stream.send('status', frame('2', '"direct"'));
  stream.end('event: shutdown\ndata: {}\n\n');
  await new Promise<void>((resolve) => socket.on('data', () => text.endsWith('0\r\n\r\n') && resolve()));
  const second = text.slice(text.indexOf('HTTP/1.1 200', 1));
  const body = second.slice(second.indexOf('\r\n\r\n') + 4);
  // Chunk by chunk: size line, bytes, CRLF.
  const chunks: string[] = [];
  for (let at = 0; ; ) {
    const line = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.slice(at, line), 16);
    if (size === 0) break;
    chunks.push(body.slice(line + 2, line + 2 + size));
    assert.equal(body.slice(line + 2 + size, line + 4 + size), '\r\n');
    at = line + 4 + size;
  }
  assert.deepEqual(chunks, [
    'retry: 3000\n\n',
    'id: 1\nevent: status\ndata: "queued"\n\n',
    'id: 2\nevent: status\ndata: "direct"\n\n',
    'event: shutdown\ndata: {}\n\n',
  ]);
});

test('a reader that stops reading: its stream holds the latest frame only, and sends it once the reader reads again', {
  timeout: 10_000,
}, async (t) => {
  const { port, client } = await server(t);
  const req = request({ port, host: '127.0.0.1', path: '/stream' });
  req.end();
  const stream = await client();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  t.after(() => res.destroy());
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => parser.feed(chunk));
  res.pause();
  const pad = 'x'.repeat(256 * 1024);
  let n = 0;
  while (!stream.blocked) {
    n += 1;
    stream.send('status', frame(String(n), JSON.stringify({ n, pad })));
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (let more = 0; more < 10; more += 1) {
    n += 1;
    stream.send('status', frame(String(n), JSON.stringify({ n, pad })));
  }
  assert.equal(stream.dropped, 9, 'ten frames while blocked: one kept');
  const last = String(n);
  res.resume();
  await new Promise<void>((resolve) => res.on('data', () => events.at(-1)?.id === last && resolve()));
  const ids = events.map((e) => Number(e.id));
  assert.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    `in order: ${ids.join(',')}`,
  );
  assert.ok(ids.length < n, `frames dropped while blocked: got ${ids.length} of ${n}`);
  assert.equal(stream.blocked, false, 'drained');
});
