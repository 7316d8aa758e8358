import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import { startApp } from './helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from './helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

test('unknown routes are JSON 404s; other methods on known routes are 405 with Allow', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const missing = await get('/api/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'NOT_FOUND');
  const post = await get('/api/provider-a/quote?symbol=IBM', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(post.body.error.code, 'METHOD_NOT_ALLOWED');
  assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
  const del = await get('/api/provider-a/quote', {}, 'DELETE');
  assert.equal(del.status, 405);
});

test('CORS: preflight is answered and headers are exposed on responses', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const preflight = await get(
    '/api/provider-a/quote?symbol=IBM',
    {
      origin: 'https://dashboard.example',
      'access-control-request-method': 'GET',
    },
    'OPTIONS',
  );
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], '*');
  const res = await get('/api/provider-a/quote?symbol=IBM', { origin: 'https://dashboard.example' });
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.match(String(res.headers['access-control-expose-headers']), /X-Cache.*Retry-After/);
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['x-powered-by'], undefined);
});

/** Headers a browser script may read without being exposed, or that are not for scripts at all. */
const NOT_FOR_SCRIPTS = new Set([
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
  'vary',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'x-content-type-options',
  'referrer-policy',
  'content-security-policy',
  'cross-origin-resource-policy',
  'strict-transport-security',
]);

test('CORS exposes every header the API sends for scripts to read, on every kind of answer', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '12' } });
  const origin = { origin: 'https://dashboard.example' };
  const quote = await get('/api/provider-a/quote?symbol=IBM', origin);
  const answers = [
    quote,
    await get('/api/provider-a/quote?symbol=IBM', origin),
    await get('/api/provider-a/quote?symbol=IBM', { ...origin, 'if-none-match': String(quote.headers.etag) }),
    await get('/api/provider-a/quote', origin),
    await get('/api/provider-a/quote?symbol=IBM', origin, 'POST'),
    await get('/api/market/overview', origin),
    await get('/api/provider-b/dividends?limit=1', origin),
    // Broker data answers the user's own pages only (a loopback origin by default).
    await get('/api/broker/quotes?symbols=AAPL', { origin: 'http://localhost:5173' }),
    await get('/api/system/status', origin),
  ];
  for (let i = 0; i < 12; i += 1) answers.push(await get('/api/provider-a/quote?symbol=MSFT', origin));
  assert.ok(
    answers.some((a) => a.status === 429),
    'a rate-limited answer is among them',
  );
  for (const res of answers) {
    const exposed = new Set(String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/));
    const unreadable = Object.keys(res.headers).filter(
      (h) => !NOT_FOR_SCRIPTS.has(h) && !h.startsWith('access-control-') && !exposed.has(h),
    );
    assert.deepEqual(unreadable, [], `${res.status} answer: not exposed to scripts`);
  }
  const limited = answers.find((a) => a.status === 200 && a.headers['x-ratelimit-remaining'] !== undefined);
  assert.ok(limited, 'rate-limit headers were sent');
});

test('a configured origin list is enforced', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, CORS_ORIGINS: 'https://good.example' } });
  const good = await get('/api/provider-a/quote?symbol=IBM', { origin: 'https://good.example' });
  assert.equal(good.headers['access-control-allow-origin'], 'https://good.example');
  const bad = await get('/api/provider-a/quote?symbol=IBM', { origin: 'https://evil.example' });
  assert.equal(bad.headers['access-control-allow-origin'], undefined);
});

test('HEAD works on GET routes', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const head = await get('/api/provider-a/quote?symbol=IBM', {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

test('the API key never appears in a response or a log line, even when the upstream rejects it', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write: (chunk, _e, cb) => {
      lines.push(String(chunk));
      cb();
    },
  });
  const secret = 'SECRETKEY1234567890';
  const { get } = await startApp(t, {
    env: ANSWERS_ENV,
    logger: pino({ level: 'trace' }, sink),
    configure: (c) => ({ ...c, alphaVantage: { ...c.alphaVantage, apiKey: secret } }),
  });
  const texts: string[] = [];
  for (const path of ['/api/provider-a/quote?symbol=IBM', '/api/provider-a/technical?symbol=IBM', '/api/provider-a/quote?symbol=AAPL']) {
    const res = await get(path);
    assert.equal(res.status, 502);
    assert.match(res.body.error.message, /ALPHA_VANTAGE_API_KEY/);
    texts.push(res.text, JSON.stringify(res.headers));
  }
  assert.ok(lines.length > 0, 'logs were captured');
  for (const text of [...texts, ...lines]) {
    assert.ok(!text.includes(secret), `leak in: ${text.slice(0, 200)}`);
    assert.ok(!text.includes(SANDBOX_CREDENTIALS.alphaVantageKey));
  }
});
