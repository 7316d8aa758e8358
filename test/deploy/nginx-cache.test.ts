// compose.yaml's nginx in front of the service, as it ships (deploy/nginx.conf): market data answered from
// nginx's cache as long as the service's Cache-Control allows, broker answers never stored, the broker access
// rule seeing each caller's address through it (TRUST_PROXY names nginx), and the stream passed through live.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp } from '../helpers/app.js';
import { startNginx } from '../helpers/nginx.js';
import { ALL_OF_THE_PRIVATE_SIDE, PRIVATE_SIDE_ENV, privateSideIn } from '../helpers/private-side.js';
import { SseClient } from '../stream/sse-client.js';

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test("through compose nginx: market hits from its cache, broker answers and status never stored, callers judged by their address (status's view too)", async (t) => {
  // nginx and the caller share 127.0.0.1 here: the proxy TRUST_PROXY names is nginx.
  const running = await startApp(t, {
    transport: 'socket',
    env: { ...PRIVATE_SIDE_ENV, TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '600' },
  });
  const nginx = await startNginx(running.url);
  t.after(() => nginx.stop());

  const quote = `${nginx.url}/api/provider-a/quote?symbol=IBM`;
  const first = await get(quote);
  assert.equal(first.status, 200, first.text);
  assert.equal(first.headers.get('x-proxy-cache'), 'MISS');
  const calls = running.sandbox.alphaVantage.count();
  const second = await get(quote);
  assert.equal(second.headers.get('x-proxy-cache'), 'HIT');
  assert.equal(second.text, first.text);
  assert.equal(second.headers.get('x-ratelimit-remaining'), null, "one caller's counter is not replayed to others");
  assert.match(String(second.headers.get('x-request-id')), /^[0-9a-f]{32}$/);
  assert.notEqual(second.headers.get('x-request-id'), first.headers.get('x-request-id'));
  const conditional = await get(quote, { 'if-none-match': String(first.headers.get('etag')) });
  assert.equal(conditional.status, 304);
  assert.equal(running.sandbox.alphaVantage.count(), calls, 'hits cost the service nothing upstream');

  for (let i = 0; i < 3; i += 1) {
    for (const path of ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes?symbols=AAPL']) {
      const res = await get(`${nginx.url}${path}`);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.match(String(res.headers.get('cache-control')), /^private, /);
      assert.notEqual(res.headers.get('x-proxy-cache'), 'HIT', path);
    }
  }
  // Status: each caller its own view, however often and in whatever order they ask.
  for (const [headers, local] of [
    [{}, true],
    [{ 'x-forwarded-for': '203.0.113.9' }, false],
    [{}, true],
    [{ 'x-forwarded-for': '203.0.113.9' }, false],
  ] as const) {
    const res = await get(`${nginx.url}/api/system/status`, headers);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(privateSideIn(res.text), local ? ALL_OF_THE_PRIVATE_SIDE : [], `${local ? 'local' : 'outsider'}: ${res.text}`);
    assert.notEqual(res.headers.get('x-proxy-cache'), 'HIT');
  }
  // nginx writes a cache file once the whole answer has passed through it.
  await sleep(100);
  const keys = nginx.storedKeys();
  assert.ok(
    keys.some((key) => key.includes('/api/provider-a/quote')),
    `market data stored: ${keys.join(' ')}`,
  );
  assert.deepEqual(
    keys.filter((key) => key.includes('/api/broker/') || key.includes('/api/system/')),
    [],
    'no broker answer or status stored',
  );

  // A caller nginx forwards from a public address (its own X-Forwarded-For entry stands for it here).
  const refused = await get(`${nginx.url}/api/broker/positions`, { 'x-forwarded-for': '203.0.113.9' });
  assert.equal(refused.status, 403);
  assert.equal(JSON.parse(refused.text).error.code, 'BROKER_FORBIDDEN');

  const stream = await SseClient.open(t, `${nginx.url}/api/stream?brokerQuotes=AAPL&overview=true`);
  assert.equal(stream.status, 200);
  await stream.until((s) => s.of('brokerQuotes').length >= 1 && s.of('overview').length >= 1, 'events through nginx');
  stream.close();
});
