// A request that reaches the service while it closes (here pipelined on a kept-alive connection behind a
// slow request in flight) is answered in the one error shape: 503 SHUTTING_DOWN with X-Request-Id,
// Retry-After and Connection: close, not Fastify's own body. Its URL is a fresh repeat the hot path would
// answer, so the test also shows that the hot path stops answering when the close begins.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { startApp, type TestResponse } from '../../helpers/app.js';
import { refused, until } from './waits.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const QUOTE = '/api/provider-a/quote';

/** The responses read from one connection, in order (each with a Content-Length). */
function parseResponses(raw: string): TestResponse[] {
  const responses: TestResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `an incomplete response: ${rest.slice(0, 200)}`);
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length']);
    const text = rest.slice(end + 4, end + 4 + length);
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, text, body: JSON.parse(text) });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}

function get(socket: Socket, path: string, requestId: string): void {
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nX-Request-Id: ${requestId}\r\n\r\n`);
}

test('a request that arrives while the server closes gets 503 SHUTTING_DOWN in the one error shape', async (t) => {
  const { app, sandbox, url, get: ask, contract } = await startApp(t, { env: ANSWERS_ENV, transport: 'socket' });
  const repeat = `${QUOTE}?symbol=IBM`;
  await ask(repeat);
  await ask(repeat);
  const hotServed = app.hotPath.served;
  await ask(repeat);
  assert.equal(app.hotPath.served, hotServed + 1, 'the repeat is armed on the hot path');

  sandbox.alphaVantage.setFaults({ latencyMs: 1_500 });
  const port = Number(new URL(url).port);
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  const calls = sandbox.alphaVantage.count('/query');
  get(socket, `${QUOTE}?symbol=MSFT`, 'in-flight');
  await until(() => sandbox.alphaVantage.count('/query') > calls, 'the slow upstream call');

  const closed = app.close();
  await until(() => refused(port), 'the listener to close');
  get(socket, repeat, 'while-closing');
  await once(socket, 'close');
  await closed;

  const [inFlight, closing, ...more] = parseResponses(received);
  assert.equal(more.length, 0);
  assert.equal(inFlight?.status, 200, inFlight?.text);
  assert.equal(inFlight.body['Global Quote']['01. symbol'], 'MSFT', 'the request in flight was answered in full');

  assert.equal(closing?.status, 503, closing?.text);
  assert.deepEqual(closing.body, {
    error: { code: 'SHUTTING_DOWN', message: 'this instance is shutting down: retry the request', status: 503, requestId: 'while-closing' },
  });
  assert.equal(closing.headers['x-request-id'], 'while-closing');
  assert.equal(closing.headers['retry-after'], '1');
  assert.equal(closing.headers.connection, 'close');
  assert.match(String(closing.headers['content-type']), /^application\/json/);
  assert.equal(closing.headers['cache-control'], 'no-store');
  assert.equal(app.hotPath.served, hotServed + 1, 'the hot path did not answer once the close began');
  contract.assert('GET', repeat, closing);
});
