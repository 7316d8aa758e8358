// Request hygiene, proven on the wire with raw sockets where a well-behaved client library would not
// send the request at all: URL and header limits, slow clients cut off, no bodies on GET/HEAD, and the
// security headers of a JSON API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/core/config.js';
import { MAX_URL_LENGTH } from '../../../src/plugins/app/server-limits.js';
import { startApp } from '../../helpers/app.js';
import { closed, exchangeUntilClose, open, parseRaw, type RawAnswer } from '../../helpers/raw-http.js';

function assertOneShape(answer: RawAnswer, status: number, code = 'INVALID_PARAMETER'): void {
  assert.equal(answer.status, status, answer.headers);
  assert.equal(answer.body?.error?.code, code, JSON.stringify(answer.body));
  assert.equal(answer.body.error.status, status);
  assert.equal(typeof answer.body.error.message, 'string');
  assert.equal(typeof answer.body.error.requestId, 'string');
  assert.match(answer.headers, /content-type: application\/json/);
  assert.match(answer.headers, /\r\nx-request-id: [\w.:-]+\r\n/, 'X-Request-Id on every error');
}

test('JSON answers carry the security headers; the HTML pages keep their own CSP', async (t) => {
  const { get } = await startApp(t);
  for (const path of ['/api/provider-a/quote?symbol=IBM', '/api/nope', '/api/system/status']) {
    const res = await get(path);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
    assert.equal(res.headers['referrer-policy'], 'no-referrer', path);
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", path);
    assert.equal(res.headers['cross-origin-resource-policy'], 'cross-origin', path);
    assert.equal(res.headers['x-powered-by'], undefined, path);
    assert.equal(res.headers['strict-transport-security'], undefined, 'no HSTS over plain HTTP');
  }
  const dashboard = await get('/');
  assert.match(String(dashboard.headers['content-security-policy']), /script-src 'self'/);
  const docs = await get('/api/docs/');
  assert.equal(docs.status, 200);
  assert.notEqual(
    docs.headers['content-security-policy'],
    "default-src 'none'; frame-ancestors 'none'",
    'the docs page can load its scripts',
  );
  assert.equal(docs.headers['x-content-type-options'], 'nosniff');
});

test('with CORS_ORIGINS set, only those origins are allowed, preflights included', async (t) => {
  const { get } = await startApp(t, { env: { CORS_ORIGINS: 'https://good.example,https://also.example' } });
  const good = await get('/api/system/status', { origin: 'https://also.example' });
  assert.equal(good.headers['access-control-allow-origin'], 'https://also.example');
  assert.match(String(good.headers.vary), /origin/i);
  assert.equal(good.headers['access-control-allow-credentials'], undefined);
  assert.equal(good.headers['cross-origin-resource-policy'], 'same-site');
  for (const origin of ['https://evil.example', 'https://good.example.evil.example', 'null', 'http://good.example']) {
    const bad = await get('/api/system/status', { origin });
    assert.equal(bad.headers['access-control-allow-origin'], undefined, origin);
    const preflight = await get('/api/system/status', { origin, 'access-control-request-method': 'GET' }, 'OPTIONS');
    assert.equal(preflight.headers['access-control-allow-origin'], undefined, origin);
  }
});

test('GET and HEAD with a body are refused with 400 INVALID_PARAMETER, and the connection is closed', async (t) => {
  const running = await startApp(t);
  const requests = [
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    'GET /api/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
  ];
  for (const request of requests) {
    const answer = await exchangeUntilClose(running, request);
    assertOneShape(answer, 400);
    assert.match(answer.body.error.message, /take no body/);
    assert.match(answer.headers, /connection: close/);
  }
  const head = await exchangeUntilClose(running, 'HEAD /api/system/status HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc');
  assert.equal(head.status, 400);
  // An explicit empty body is no body.
  const empty = await exchangeUntilClose(
    running,
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
  );
  assert.equal(empty.status, 200);
  // Content-Length and Transfer-Encoding together (request smuggling) never reach a handler.
  const both = await exchangeUntilClose(
    running,
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  );
  assertOneShape(both, 400);
});

test('URLs up to 8 KiB are read; longer ones are 400, and past 16 KiB of headers 431, in the one error shape', async (t) => {
  const running = await startApp(t);
  const base = '/api/provider-a/quote?symbol=IBM&pad=';
  const fits = await running.get(base + 'x'.repeat(MAX_URL_LENGTH - base.length));
  assert.equal(fits.status, 200);
  const long = await running.get(base + 'x'.repeat(MAX_URL_LENGTH - base.length + 1));
  assert.equal(long.status, 400);
  assert.equal(long.body.error.code, 'INVALID_PARAMETER');
  assert.match(long.body.error.message, /longer than 8192/);
  const huge = await exchangeUntilClose(running, `GET ${base}${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertOneShape(huge, 431, 'HEADERS_TOO_LARGE');
  const bigHeader = await exchangeUntilClose(running, `GET /api/system/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(17_000)}\r\n\r\n`);
  assertOneShape(bigHeader, 431, 'HEADERS_TOO_LARGE');
  const manyHeaders = Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'z'.repeat(40)}\r\n`).join('');
  assertOneShape(
    await exchangeUntilClose(running, `GET /api/system/status HTTP/1.1\r\nHost: x\r\n${manyHeaders}\r\n`),
    431,
    'HEADERS_TOO_LARGE',
  );
});

test('bytes that are not HTTP get a 400 in the one shape', async (t) => {
  const running = await startApp(t);
  for (const request of [
    'GET /api/provider-a/quote?symbol=IB\x00M HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /api/provider-a/quote?symbol=I M HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nX-Bad\x01: 1\r\n\r\n',
    'GET /api/system/status HTTP/1.1\r\nHost: x\r\nX-Split: a\rb\r\n\r\n',
    'HELLO\r\n\r\n',
  ]) {
    assertOneShape(await exchangeUntilClose(running, request), 400);
  }
});

test("an HTTP/1.1 request without Host is a 400 in the one shape with a request id, not Node's bare 400, on every route", async (t) => {
  const running = await startApp(t, { transport: 'socket' });
  // A URL the hot path holds, answered before Fastify, is refused all the same.
  for (let i = 0; i < 2; i += 1) assert.equal((await running.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  const served = running.app.hotPath.served;
  for (const path of ['/api/provider-a/quote?symbol=IBM', '/api/broker/accounts', '/api/nope', '/api/system/status']) {
    const answer = await exchangeUntilClose(running, `GET ${path} HTTP/1.1\r\nX-Request-Id: no-host-1\r\n\r\n`);
    assertOneShape(answer, 400);
    assert.match(answer.body.error.message, /must carry a Host header/, path);
    assert.equal(answer.body.error.requestId, 'no-host-1', path);
    assert.match(answer.headers, /\r\nx-request-id: no-host-1\r\n/, path);
    assert.match(answer.headers, /\r\nconnection: close\r\n/, path);
  }
  assert.equal(running.app.hotPath.served, served, 'the hot path answered none of them');
  // HTTP/1.0 has no Host to require; an empty Host is a Host (RFC 9112 §3.2), and the broker's own Host rule judges it.
  assert.equal((await exchangeUntilClose(running, 'GET /api/provider-a/quote?symbol=IBM HTTP/1.0\r\n\r\n')).status, 200);
  const emptyHost = await exchangeUntilClose(running, 'GET /api/broker/accounts HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n');
  assertOneShape(emptyHost, 403, 'BROKER_FORBIDDEN');
  assert.match(emptyHost.body.error.message, /Host header/);
});

test('what Node would answer by itself is answered in the one shape: an unknown expectation is ignored, CONNECT is 405', async (t) => {
  const running = await startApp(t);
  const expecting = await exchangeUntilClose(
    running,
    'GET /api/provider-a/quote?symbol=IBM HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n',
  );
  assert.equal(expecting.status, 200, 'not a bare 417: RFC 9110 §10.1.1 lets a server ignore an expectation it does not know');
  assert.ok(expecting.body['Global Quote']);
  const connect = await exchangeUntilClose(running, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  assertOneShape(connect, 405, 'METHOD_NOT_ALLOWED');
  assert.match(connect.headers, /\r\nallow: get, head, options\r\n/);
});

test("a path that is not valid percent-encoding is a 400 in the one shape, not Fastify's own body", async (t) => {
  const running = await startApp(t);
  for (const path of ['/api/provider-a/quote%E0%A4%A?symbol=IBM', '/api/%zz', '/%', '/api/provider-a/%C0%AF']) {
    const answer = await exchangeUntilClose(
      running,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad-url-1\r\nConnection: close\r\n\r\n`,
    );
    if (answer.status === 404) continue; // decodable after all: routed, and answered by the not-found handler
    assertOneShape(answer, 400);
    assert.match(answer.body.error.message, /percent-encoding/, path);
    assert.equal(answer.body.error.requestId, 'bad-url-1', "the caller's id is echoed");
    assert.match(answer.headers, /x-content-type-options: nosniff/);
    assert.match(answer.headers, /x-data-mode: sandbox/);
  }
  const first = await exchangeUntilClose(running, 'GET /api/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assert.equal(first.status, 400, 'at least one malformed path reaches the bad-URL handler');
});

test('an OPTIONS that is not a CORS preflight is a 400 in the one shape; real preflights carry X-Request-Id too', async (t) => {
  const running = await startApp(t);
  for (const headers of ['', 'Origin: https://a.example\r\n', 'Access-Control-Request-Method: GET\r\n']) {
    const answer = await exchangeUntilClose(
      running,
      `OPTIONS /api/provider-a/quote HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`,
    );
    assertOneShape(answer, 400);
    assert.match(answer.body.error.message, /Access-Control-Request-Method/);
  }
  const preflight = await exchangeUntilClose(
    running,
    'OPTIONS /api/provider-a/quote HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\nConnection: close\r\n\r\n',
  );
  assert.equal(preflight.status, 204);
  assert.match(preflight.headers, /access-control-allow-origin: \*/);
  assert.match(preflight.headers, /\r\nx-request-id: [\w-]+\r\n/);
});

test('a client dribbling its headers is cut off at HEADERS_TIMEOUT_MS with a 408, and so is a silent one', async (t) => {
  const env = { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '500', KEEP_ALIVE_TIMEOUT_MS: '100', UPSTREAM_TIMEOUT_MS: '100' };
  const running = await startApp(t, { env });
  assert.equal(running.app.server.headersTimeout, 300);
  assert.equal(running.app.server.requestTimeout, 500);

  const socket = await open(running);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  socket.write('GET /api/system/status HTTP/1.1\r\nHost: x\r\n');
  // One header line every 50 ms for up to 30 s: a live client that never finishes its headers.
  let sent = 0;
  const timer = setInterval(() => {
    if (sent++ < 600 && !socket.destroyed) socket.write(`X-Slow-${sent}: 1\r\n`);
  }, 50);
  t.after(() => clearInterval(timer));
  await closed(socket);
  clearInterval(timer);
  assert.ok(sent < 600, `the server closed the connection while the client was still sending (${sent} lines)`);
  assertOneShape(parseRaw(Buffer.concat(chunks).toString('utf8')), 408, 'REQUEST_TIMEOUT');

  // A client that connects and sends nothing is held to the same deadline.
  const silent = await open(running);
  const answer: Buffer[] = [];
  silent.on('data', (chunk: Buffer) => answer.push(chunk));
  silent.on('error', () => {});
  await closed(silent);
  assertOneShape(parseRaw(Buffer.concat(answer).toString('utf8')), 408, 'REQUEST_TIMEOUT');
});

test('timeouts come from the configuration, and must be consistent', async (t) => {
  const running = await startApp(t, { env: { KEEP_ALIVE_TIMEOUT_MS: '5000' } });
  assert.equal(running.app.server.keepAliveTimeout, 5000);
  assert.equal(running.app.server.headersTimeout, 10_000, 'default');
  assert.equal(running.app.server.requestTimeout, 30_000, 'default');
  assert.ok(running.app.server.timeout > running.config.upstreamTimeoutMs, 'an idle socket outlives any upstream wait');
  assert.throws(
    () => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }),
    (e: unknown) => {
      return e instanceof ConfigError && e.problems.some((p) => /HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS/.test(p));
    },
  );
});
