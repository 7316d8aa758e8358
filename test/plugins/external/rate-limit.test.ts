import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';
import { exchangeUntilClose } from '../../helpers/raw-http.js';
import { redisPrefix } from '../../store/redis-helper.js';
import { startProxy } from '../../store/tcp-proxy.js';

const QUOTE = '/api/provider-a/quote?symbol=IBM';

test('a caller over its limit gets 429 RATE_LIMITED with Retry-After; system routes and preflights are not limited', async (t) => {
  const service = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '3' } });
  for (let i = 0; i < 3; i += 1) assert.equal((await service.get(QUOTE)).status, 200);
  const limited = await service.get(QUOTE);
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'RATE_LIMITED');
  const retryAfter = Number(limited.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal((await service.get('/api/system/status')).status, 200);
  const preflight = await service.get(QUOTE, { origin: 'https://dash.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
  assert.ok(preflight.status < 300, `preflight ${preflight.status}`);
});

test('an absolute-form flood is limited like any other: 429 past the limit, the hot path included', async (t) => {
  const service = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '4' }, transport: 'socket' });
  // RFC 9112 lets a client name the whole URL in the request line; Fastify routes it as the path.
  const flood = `GET http://x${QUOTE} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
  const answers = [];
  for (let i = 0; i < 10; i += 1) answers.push(await exchangeUntilClose(service, flood));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 429, 429, 429, 429, 429, 429],
  );
  assert.ok(service.app.hotPath.served >= 3, `the repeats were the hot path's until the limit (${service.app.hotPath.served})`);
  assert.ok(answers.slice(4).every((a) => a.body?.error?.code === 'RATE_LIMITED' && /retry-after: \d+/.test(a.headers)));
});

test("every spelling of a limited route counts in the caller's one window; system routes stay unlimited however spelt", async (t) => {
  const service = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '4' }, transport: 'socket' });
  const ask = (target: string) => exchangeUntilClose(service, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const spellings = [
    '/%61pi/provider-a/quote?symbol=MSFT',
    'HTTPS://other.example/api/provider-a/%71uote?symbol=AAPL',
    'http://x:8080/api/provider-a/quote?symbol=IBM',
    '/api/provider-a/quote?symbol=NVDA',
  ];
  for (const target of spellings) assert.equal((await ask(target)).status, 200, target);
  for (const target of spellings) {
    const over = await ask(target);
    assert.equal(over.status, 429, target);
    assert.equal(over.body.error.code, 'RATE_LIMITED');
  }
  for (const target of ['http://x/api/system/status', '/%61pi/system/live', '/api/system/status'])
    assert.equal((await ask(target)).status, 200, `${target} is not limited`);
});

test('X-Forwarded-For is ignored unless a trusted proxy is configured', async (t) => {
  const untrusted = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '2' } });
  for (const ip of ['10.0.0.1', '10.0.0.2']) assert.equal((await untrusted.get(QUOTE, { 'x-forwarded-for': ip })).status, 200);
  assert.equal((await untrusted.get(QUOTE, { 'x-forwarded-for': '10.0.0.3' })).status, 429, 'a forged header does not buy a new allowance');

  const behindProxy = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' } });
  for (let i = 0; i < 2; i += 1) assert.equal((await behindProxy.get(QUOTE, { 'x-forwarded-for': '203.0.113.7' })).status, 200);
  assert.equal((await behindProxy.get(QUOTE, { 'x-forwarded-for': '203.0.113.7' })).status, 429);
  assert.equal(
    (await behindProxy.get(QUOTE, { 'x-forwarded-for': '203.0.113.8' })).status,
    200,
    'each client behind the proxy has its own allowance',
  );
});

test('with Redis the limit is shared by replicas, and a lost Redis falls back to a local limit', async (t) => {
  const proxy = await startProxy(t);
  const env = { RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: proxy.url, REDIS_KEY_PREFIX: redisPrefix(t) };
  const [a, b] = await Promise.all([startApp(t, { env }), startApp(t, { env })]);
  assert.equal((await a!.get(QUOTE)).status, 200);
  assert.equal((await b!.get(QUOTE)).status, 200);
  assert.equal((await a!.get(QUOTE)).status, 200);
  assert.equal((await b!.get(QUOTE)).status, 200);
  assert.equal((await a!.get(QUOTE)).status, 429, 'four in total across both replicas');

  const down = Promise.all([a!, b!].map((s) => (s.app.deps.store.redis!.ready ? once(s.app.deps.store.redis!, 'state:down') : undefined)));
  await proxy.cut();
  await down;
  const answers = await Promise.all(Array.from({ length: 6 }, () => b!.get(QUOTE)));
  assert.ok(
    answers.every((r) => r.status === 200 || r.status === 429),
    'no 5xx without Redis',
  );
  assert.equal(answers.filter((r) => r.status === 200).length, 4, 'the local limit applies meanwhile');
});
