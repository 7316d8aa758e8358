// The edge tells callers apart only where an error's words do: an upstream failure through an outbound proxy
// that cannot be reached, told in full (the proxy, the setting to check) to a local caller and as "could not be
// reached" to anyone else, while the log line keeps the full words for the operator.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp, type TestResponse } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { freePort } from '../../store/redis-topology.js';

test('an upstream failure through an unreachable proxy: an outsider hears the upstream could not be reached, a local caller which proxy failed, and the log line keeps it', async (t) => {
  const closed = await freePort();
  const proxy = `127.0.0.1:${closed}`;
  const running = await startApp(t, {
    env: {
      ...UNCAPPED,
      ...NO_FALLBACK,
      HTTP_PROXY: `http://user:secret-pw-5150@${proxy}`,
      // The simulators are on loopback: through the proxy only when named.
      PROXY_ALSO_FOR: '127.0.0.1',
      TRUST_PROXY: '127.0.0.1',
    },
  });
  const outsider = { 'x-forwarded-for': '203.0.113.9' };
  const namesTheProxy = (res: TestResponse) => res.text.includes(proxy) || /proxy/i.test(res.text);

  const quote = await running.get('/api/provider-a/quote?symbol=IBM', outsider);
  assert.equal(quote.status, 502);
  assert.equal(quote.body.error.code, 'UPSTREAM_ERROR');
  assert.equal(quote.body.error.message, 'Alpha Vantage could not be reached');
  const local = await running.get('/api/provider-a/quote?symbol=MSFT');
  assert.equal(local.status, 502);
  assert.equal(
    local.body.error.message,
    `Alpha Vantage was not reached: the outbound proxy ${proxy} (HTTP_PROXY) is unreachable (ECONNREFUSED: nothing answers there): check HTTP_PROXY`,
  );

  // Alpha Vantage's own error key on the drop-in says the same as the body.
  const query = await running.get('/api/provider-a/query?function=GLOBAL_QUOTE&symbol=AAPL', outsider);
  assert.equal(query.status, 502);
  assert.equal(query.body['Error Message'], 'Alpha Vantage could not be reached');
  const overview = await running.get('/api/market/overview', outsider);
  assert.equal(overview.status, 502);
  assert.match(overview.body.error.message, /^no instrument of the market overview could be fetched \(Yahoo could not be reached\)$/);

  // Once the failures open the circuit, the paused calls give the fix to local callers only.
  let paused = quote;
  for (let i = 0; i < 8 && !/paused/.test(paused.body.error.message); i += 1)
    paused = await running.get(`/api/provider-a/quote?symbol=T${i}`, outsider);
  assert.equal(paused.body.error.message, 'Alpha Vantage is failing; calls are paused until it recovers');
  assert.match(
    (await running.get('/api/provider-a/quote?symbol=IBM')).body.error.message,
    new RegExp(`paused until it recovers: .*${proxy}`),
  );

  const outsiders = [quote, query, overview, paused];
  for (const res of outsiders) assert.ok(!namesTheProxy(res), res.text);
  assert.ok(namesTheProxy(local));
  // Status's last error is worded for its reader too.
  const lastError = async (headers: Record<string, string>) =>
    (await running.get('/api/system/status', headers)).body.upstreams.find((u: { id: string }) => u.id === 'provider-a').lastError.message;
  assert.ok(!(await lastError(outsider)).includes(proxy));
  assert.match(await lastError({}), new RegExp(`outbound proxy ${proxy}`));

  // The operator reads the full words on the line of the outsider's request.
  for (const res of outsiders) {
    const lines = running.scan.lines.filter((line) => line.includes(`"reqId":"${res.body.error.requestId}"`));
    assert.ok(
      lines.some((line) => line.includes(proxy) && /"level":40/.test(line)),
      `a warning naming the proxy for ${res.body.error.requestId}: ${lines.join('')}`,
    );
  }
});

test("a caller's value in a validation or not-found message is cut to 100 characters: an unknown parameter, an unmatched path", async (t) => {
  const { get } = await startApp(t);
  const long = 'x'.repeat(5_000);
  const unknown = await get(`/api/stream?${long}=1`);
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.message, `unknown parameter: ${'x'.repeat(99)}…`);
  const unmatched = await get(`/api/${long}`);
  assert.equal(unmatched.status, 404);
  assert.equal(unmatched.body.error.message, `no route for GET ${`/api/${long}`.slice(0, 99)}…`);
  for (const answer of [unknown, unmatched]) assert.ok(answer.text.length < 500, `${answer.text.length} bytes`);
});
