// Broker data stays local: each protected route and stream topic, asked by callers of every kind (loopback,
// private, public, forwarded by a proxy TRUST_PROXY names or not, with or without BROKER_TOKEN, from web
// pages of listed and foreign origins), against the IBKR simulator, whose request count shows that a refused
// caller costs no broker call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { SseClient } from '../../stream/sse-client.js';
import { brokerExposure } from '../../../src/broker/broker-access.js';
import { testConfig } from '../../helpers/config.js';

const ROUTES = ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes?symbols=AAPL'];
const TOKEN = 'broker-token-0123456789abcdef';

interface Ask {
  remoteAddress?: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'OPTIONS' | 'HEAD';
}

/** One request as a caller at `remoteAddress` sends it (Fastify's inject sets the socket's address), held to the OpenAPI document. */
async function ask(
  running: RunningApp,
  url: string,
  { remoteAddress = '127.0.0.1', headers = {}, method = 'GET' }: Ask = {},
): Promise<TestResponse> {
  const res = await running.app.inject({ method, url, headers, remoteAddress });
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    body = undefined;
  }
  const strings = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
  const answer = running.scan.response({ status: res.statusCode, headers: strings, body, text: res.body });
  if (method !== 'OPTIONS') running.contract.assert(method, url, answer);
  return answer;
}

function assertRefused(res: TestResponse, what: string, status = 403): void {
  assert.equal(res.status, status, `${what}: ${res.text}`);
  assert.equal(res.body.error.code, 'BROKER_FORBIDDEN', what);
  assert.equal(res.headers['cache-control'], 'no-store', what);
  assert.match(String(res.headers.vary), /Origin, Authorization/, what);
  assert.equal(res.headers['access-control-allow-origin'], undefined, what);
  assert.doesNotMatch(res.text, /DU\d{7}|U\d{7}|"positions"|"accounts"|"quotes"/, what);
}

test('callers by network: loopback and private read broker data, public callers are refused before any broker call', async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr' } });
  const admitted = [
    '127.0.0.1',
    '127.9.9.9',
    '::1',
    '::ffff:127.0.0.1',
    '10.1.2.3',
    '172.20.0.5',
    '192.168.1.9',
    'fd00::7',
    '::ffff:10.0.0.1',
  ];
  const refused = ['8.8.8.8', '100.64.0.1', '169.254.1.1', '2001:db8::1', '::ffff:8.8.8.8', 'fe80::1'];
  for (const url of ROUTES) {
    for (const remoteAddress of admitted) {
      const res = await ask(running, url, { remoteAddress });
      assert.equal(res.status, 200, `${url} from ${remoteAddress}: ${res.text}`);
      assert.match(String(res.headers['cache-control']), /^private, max-age=\d+/);
      assert.equal(res.headers.vary, 'Origin, Authorization');
    }
    const calls = running.sandbox.ibkr.count();
    for (const remoteAddress of refused) {
      const res = await ask(running, url, { remoteAddress });
      assertRefused(res, `${url} from ${remoteAddress}`);
      assert.match(res.body.error.message, /BROKER_ALLOW_FROM/);
      assert.match(res.body.error.message, /BROKER_TOKEN/);
    }
    assert.equal(running.sandbox.ibkr.count(), calls, `${url}: no broker call for a refused caller`);
  }
  // Public data stays public.
  const health = await ask(running, '/api/broker/health', { remoteAddress: '8.8.8.8' });
  assert.equal(health.status, 200);
  assert.doesNotMatch(health.text, /DU\d{7}|U\d{7}/);
  assert.equal((await ask(running, '/api/provider-a/quote?symbol=IBM', { remoteAddress: '8.8.8.8' })).status, 200);
});

test('forwarded requests: judged by X-Forwarded-For only when TRUST_PROXY names the proxy', async (t) => {
  const untrusted = await startApp(t, { env: { BROKER: 'ibkr' } });
  const forwardings: Record<string, string>[] = [
    { 'x-forwarded-for': '127.0.0.1' },
    { forwarded: 'for=127.0.0.1' },
    { 'x-real-ip': '10.0.0.1' },
  ];
  for (const headers of forwardings) {
    const res = await ask(untrusted, '/api/broker/positions', { remoteAddress: '127.0.0.1', headers });
    assertRefused(res, `untrusted ${JSON.stringify(headers)}`);
    assert.match(res.body.error.message, /TRUST_PROXY/);
  }

  // A hop count names no proxy: a direct caller could write any X-Forwarded-For.
  const hops = await startApp(t, { env: { BROKER: 'ibkr', TRUST_PROXY: '1' } });
  assertRefused(
    await ask(hops, '/api/broker/accounts', { remoteAddress: '8.8.8.8', headers: { 'x-forwarded-for': '10.0.0.1' } }),
    'hop count',
  );

  const trusted = await startApp(t, { env: { BROKER: 'ibkr', TRUST_PROXY: '10.0.0.5' } });
  const via = (forwardedFor: string) => ({ remoteAddress: '10.0.0.5', headers: { 'x-forwarded-for': forwardedFor } });
  assert.equal((await ask(trusted, '/api/broker/accounts', via('192.168.7.7'))).status, 200);
  assert.equal(
    (await ask(trusted, '/api/broker/accounts', via('8.8.8.8, 192.168.7.7'))).status,
    200,
    'the nearest untrusted hop is the caller',
  );
  assertRefused(await ask(trusted, '/api/broker/accounts', via('8.8.8.8')), 'public caller through the proxy');
  assertRefused(await ask(trusted, '/api/broker/accounts', via('127.0.0.1, 8.8.8.8')), 'a forged loopback entry before the real caller');
  assertRefused(await ask(trusted, '/api/broker/accounts', via('not-an-address')), 'a malformed X-Forwarded-For');
  const realIpOnly = await ask(trusted, '/api/broker/accounts', { remoteAddress: '10.0.0.5', headers: { 'x-real-ip': '192.168.7.7' } });
  assertRefused(realIpOnly, 'X-Real-IP without X-Forwarded-For');
  assert.match(realIpOnly.body.error.message, /X-Forwarded-For/);
  // A peer TRUST_PROXY does not name, though private, is not believed.
  assertRefused(
    await ask(trusted, '/api/broker/accounts', { remoteAddress: '10.0.0.6', headers: { 'x-forwarded-for': '10.0.0.1' } }),
    'other peer',
  );
});

test("a broker 403 says what to configure but names neither the networks allowed nor the proxy in front; its request's info line does", async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr', BROKER_ALLOW_FROM: '10.20.0.0/16,192.168.77.0/24' } });
  const network = await ask(running, '/api/broker/accounts', { remoteAddress: '8.8.8.8' });
  assertRefused(network, 'a public caller');
  assert.equal(
    network.body.error.message,
    "broker data is readable from the networks BROKER_ALLOW_FROM names, and this caller's address 8.8.8.8 is not among them; to read broker data from elsewhere, set BROKER_TOKEN and send it as a bearer token",
  );
  // A proxy in front that TRUST_PROXY does not name, at its address on the private side.
  const forwarded = await ask(running, '/api/broker/positions', {
    remoteAddress: '172.18.0.3',
    headers: { 'x-forwarded-for': '10.20.1.1' },
  });
  assertRefused(forwarded, 'forwarded by an unnamed proxy');
  assert.match(forwarded.body.error.message, /by a proxy, which TRUST_PROXY does not name/);
  for (const [res, detail] of [
    [network, '10.20.0.0/16, 192.168.77.0/24 (BROKER_ALLOW_FROM)'],
    [forwarded, 'forwarded (x-forwarded-for) by 172.18.0.3, which TRUST_PROXY does not name'],
  ] as const) {
    assert.doesNotMatch(res.text, /10\.20\.0\.0|192\.168\.77|172\.18\.0\.3/);
    const line = running.scan.lines.find((l) => l.includes(`"reqId":"${res.body.error.requestId}"`) && l.includes(detail));
    assert.ok(line !== undefined, `a line of ${res.body.error.requestId} holding ${detail}`);
    assert.match(line, /"level":30/);
    assert.match(line, /"code":"BROKER_FORBIDDEN"/);
  }
});

test('BROKER_TOKEN admits from anywhere; a wrong one is 401; BROKER_ALLOW_FROM=none leaves the token alone', async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr', BROKER_TOKEN: TOKEN, BROKER_ALLOW_FROM: 'none' } });
  for (const url of ROUTES) {
    const ok = await ask(running, url, { remoteAddress: '8.8.8.8', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200, `${url}: ${ok.text}`);
    assert.match(String(ok.headers['cache-control']), /^private, /);
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, 'Bearer', TOKEN]) {
      const wrong = await ask(running, url, { remoteAddress: '127.0.0.1', headers: { authorization } });
      assertRefused(wrong, `${url} ${authorization.slice(0, 12)}`, 401);
      assert.match(String(wrong.headers['www-authenticate']), /^Bearer .*invalid_token/);
    }
    assertRefused(await ask(running, url, { remoteAddress: '127.0.0.1' }), `${url} from loopback without the token (none allowed)`);
  }
  // The scan (startApp) fails the test if the token shows in a log line or a response.
  assert.ok(running.scan.lines.length > 0);
});

test('web pages: listed and loopback origins get CORS for broker data, foreign ones neither data nor a grant, preflights included', async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr', BROKER_CORS_ORIGINS: 'http://localhost:*,https://dash.example.com' } });
  const preflight = (origin: string, url = '/api/broker/positions', extra: Record<string, string> = {}) =>
    ask(running, url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET', ...extra } });
  for (const origin of ['http://localhost:5173', 'https://dash.example.com']) {
    const res = await ask(running, '/api/broker/positions', { headers: { origin } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], origin);
    assert.match(String(res.headers.vary), /Origin/);
    const pre = await preflight(origin, '/api/broker/positions', {
      'access-control-request-headers': 'authorization',
      'access-control-request-private-network': 'true',
    });
    assert.equal(pre.status, 204, pre.text);
    assert.equal(pre.headers['access-control-allow-origin'], origin);
    assert.equal(pre.headers['access-control-allow-private-network'], 'true');
    assert.match(String(pre.headers['access-control-allow-headers']), /authorization/i);
  }
  const calls = running.sandbox.ibkr.count();
  for (const origin of ['https://evil.example', 'http://127.0.0.1:5173', 'null', 'https://dash.example.com.evil.example']) {
    assertRefused(await ask(running, '/api/broker/positions', { headers: { origin } }), `GET from ${origin}`);
    const pre = await preflight(origin, '/api/broker/quotes?symbols=AAPL', { 'access-control-request-private-network': 'true' });
    assertRefused(pre, `preflight from ${origin}`);
    assert.equal(pre.headers['access-control-allow-private-network'], undefined);
    assertRefused(await preflight(origin, '/api/stream?brokerQuotes=AAPL'), `stream preflight from ${origin}`);
  }
  // A page of another site that sends no Origin (an <img> or <script> tag).
  assertRefused(await ask(running, '/api/broker/accounts', { headers: { 'sec-fetch-site': 'cross-site' } }), 'cross-site no-cors');
  assert.equal(running.sandbox.ibkr.count(), calls, 'no broker call for a foreign page');
  // Market data keeps CORS_ORIGINS (`*`) for any page, with no Vary it does not need.
  const market = await ask(running, '/api/provider-a/quote?symbol=IBM', { headers: { origin: 'https://evil.example' } });
  assert.equal(market.headers['access-control-allow-origin'], '*');
  assert.equal(market.headers.vary, undefined);
  assert.equal((await preflight('https://evil.example', '/api/provider-a/quote?symbol=IBM')).headers['access-control-allow-origin'], '*');
});

test("a rebound name (DNS rebinding) is not this service's: refused unless the caller holds the token", async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr', BROKER_TOKEN: TOKEN } });
  for (const host of ['evil.example:3000', 'localhost.evil.example']) {
    const res = await ask(running, '/api/broker/positions', { headers: { host, 'sec-fetch-site': 'same-origin' } });
    assertRefused(res, host);
    assert.match(res.body.error.message, /Host/);
  }
  for (const host of ['127.0.0.1:3000', '[::1]:3000', 'localhost:3000', '192.168.1.10:8080'])
    assert.equal((await ask(running, '/api/broker/positions', { headers: { host } })).status, 200, host);
  const withToken = await ask(running, '/api/broker/positions', {
    headers: { host: 'box.example:3000', authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(withToken.status, 200);
});

test('every broker answer says private or no-store, and what it varies on: 200, 304, refusals, errors', async (t) => {
  const running = await startApp(t, { env: { BROKER: 'ibkr' } });
  const first = await ask(running, '/api/broker/accounts');
  const notModified = await ask(running, '/api/broker/accounts', { headers: { 'if-none-match': String(first.headers.etag) } });
  assert.equal(notModified.status, 304);
  for (const res of [first, notModified]) {
    assert.match(String(res.headers['cache-control']), /^private, max-age=\d+, stale-while-revalidate=\d+, stale-if-error=\d+$/);
    assert.equal(res.headers.vary, 'Origin, Authorization');
  }
  const bad = await ask(running, '/api/broker/quotes?symbols=not!a!symbol');
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['cache-control'], 'no-store');
  assert.equal(bad.headers.vary, 'Origin, Authorization');
  assertRefused(await ask(running, '/api/broker/accounts', { remoteAddress: '8.8.8.8' }), 'refusal');

  const none = await startApp(t, { env: { BROKER: 'none' } });
  const unconfigured = await ask(none, '/api/broker/positions');
  assert.equal(unconfigured.status, 503);
  assert.equal(unconfigured.headers['cache-control'], 'no-store');
  assert.equal(unconfigured.headers.vary, 'Origin, Authorization');
  assert.match(String((await ask(running, '/api/broker/health')).headers['cache-control']), /^public, /);
});

test('stream topics: broker topics follow the broker rule; one-time tickets admit an EventSource from anywhere, once', async (t) => {
  // The service sits behind a proxy on loopback that TRUST_PROXY names, so X-Forwarded-For plays the caller.
  const running = await startApp(t, { transport: 'socket', env: { BROKER: 'ibkr', BROKER_TOKEN: TOKEN, TRUST_PROXY: '127.0.0.1' } });
  const publicCaller = { 'x-forwarded-for': '203.0.113.9' };
  const stream = (query: string, headers: Record<string, string> = {}) => SseClient.open(t, `${running.url}/api/stream?${query}`, headers);

  const refused = await stream('brokerQuotes=AAPL', publicCaller);
  assert.equal(refused.status, 403);
  assert.equal(JSON.parse(refused.body).error.code, 'BROKER_FORBIDDEN');
  assert.equal((await stream('brokerQuotes=AAPL&quote=IBM', publicCaller)).status, 403, 'a broker topic among others');
  const market = await stream('quote=IBM', publicCaller);
  assert.equal(market.status, 200, 'market topics stay public');
  market.close();
  const privateCaller = await stream('brokerQuotes=AAPL', { 'x-forwarded-for': '192.168.4.4' });
  assert.equal(privateCaller.status, 200);
  await privateCaller.until((s) => s.of('brokerQuotes').length >= 1, 'a broker quote');
  privateCaller.close();

  // A remote page: a ticket with the token over an ordinary request, then the EventSource URL with it.
  const ticket = await running.get('/api/broker/stream-ticket', { ...publicCaller, authorization: `Bearer ${TOKEN}` });
  assert.equal(ticket.status, 200, ticket.text);
  assert.equal(ticket.headers['cache-control'], 'no-store');
  assertRefused(await running.get('/api/broker/stream-ticket', publicCaller), 'a ticket without the token');
  const admitted = await stream(`brokerQuotes=AAPL&ticket=${ticket.body.ticket}`, publicCaller);
  assert.equal(admitted.status, 200);
  await admitted.until((s) => s.of('brokerQuotes').length >= 1, 'a broker quote');
  admitted.close();
  const again = await stream(`brokerQuotes=AAPL&ticket=${ticket.body.ticket}`, publicCaller);
  assert.equal(again.status, 401, 'a ticket admits once');
  assert.match(JSON.parse(again.body).error.message, /stream-ticket/);
  // The ticket is redacted from the request log.
  assert.ok(running.scan.lines.every((line) => !line.includes(ticket.body.ticket)));
});

test('the start warns once when broker data is reachable beyond loopback, naming who may read it', (t) => {
  const warn = (env: Record<string, string>) => brokerExposure(testConfig(t, env));
  assert.equal(warn({ HOST: '127.0.0.1' }), undefined);
  assert.equal(warn({ HOST: '0.0.0.0', BROKER: 'none' }), undefined);
  assert.match(String(warn({ HOST: '0.0.0.0' })), /loopback, private \(BROKER_ALLOW_FROM\); BROKER_TOKEN is not set/);
  const withToken = String(warn({ HOST: '::', BROKER_ALLOW_FROM: 'loopback', BROKER_TOKEN: TOKEN, TRUST_PROXY: '10.0.0.5' }));
  assert.match(withToken, /from loopback \(BROKER_ALLOW_FROM\), and from anywhere with BROKER_TOKEN; callers behind 10\.0\.0\.5/);
  assert.doesNotMatch(withToken, new RegExp(TOKEN));
});
