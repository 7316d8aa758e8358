// Issue 41's attack, in small: one caller floods new symbols and holds streams of symbols; another arrives. Over
// real HTTP against the sandbox's Alpha Vantage, on its real plan (5 a minute, 1 a second), two callers told
// apart by X-Forwarded-For behind a proxy the service trusts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { startApp } from '../helpers/app.js';
import { NO_FALLBACK } from '../helpers/config.js';
import { SseClient } from '../stream/sse-client.js';

const STOCKS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);
const FLOODER = { 'x-forwarded-for': '203.0.113.9' };
const NEWCOMER = { 'x-forwarded-for': '198.51.100.4' };
/** Provider A alone (no Yahoo fallback answering in its place), its plan as the spec says, pacing quick enough for a test. */
const ENV = { ...NO_FALLBACK, TRUST_PROXY: '127.0.0.1', ALPHA_VANTAGE_MIN_INTERVAL_MS: '1100', RATE_LIMIT_PER_MINUTE: '0' };

test("one caller's flood cannot take the last call of the minute: a newcomer's new symbol is answered by provider A itself", async (t) => {
  const service = await startApp(t, { env: ENV });
  const quote = (symbol: string, who: Record<string, string>) => service.get(`/api/provider-a/quote?symbol=${symbol}`, who);
  const flood = [];
  for (const symbol of STOCKS.slice(100, 106)) flood.push(await quote(symbol, FLOODER));
  assert.deepEqual(
    flood.map((r) => r.status),
    [200, 200, 200, 200, 429, 429],
    'four of five: the fifth call of the minute is kept for callers below their share',
  );
  const refused = flood[4];
  assert.equal(refused?.body.error.code, 'CALLER_SHARE_SPENT');
  assert.match(refused?.body.error.message, /Alpha Vantage's 5 calls a minute/);
  assert.ok(Number(refused?.headers['retry-after']) >= 55, `Retry-After ${refused?.headers['retry-after']}`);
  const calls = service.sandbox.alphaVantage.count();
  assert.equal(calls, 4);

  const newcomer = await quote(STOCKS[200] as string, NEWCOMER);
  assert.equal(newcomer.status, 200);
  assert.equal(newcomer.headers['x-data-source'], 'alpha-vantage');
  assert.equal(service.sandbox.alphaVantage.count(), calls + 1);

  // The flooder still gets every answer the cache holds.
  const cached = await quote(STOCKS[100] as string, FLOODER);
  assert.equal(cached.status, 200);
  assert.equal(cached.headers['x-cache'], 'HIT');

  const status = (await service.get('/api/system/status')).body as {
    upstreams: { area?: string; id: string; budget: { share: { minute?: Record<string, number> } | null } | null }[];
  };
  const share = status.upstreams.find((u) => u.budget?.share?.minute !== undefined)?.budget?.share?.minute;
  assert.deepEqual(share, { limit: 5, reserved: 1, callers: 2, held: 1 });
  const metrics = (await service.scrape()).text;
  assert.match(metrics, /mdp_caller_share_refusals_total\{upstream="provider-a",caller="anonymous"\} 2/);
  assert.match(metrics, /mdp_upstream_caller_calls_total\{upstream="provider-a",caller="anonymous"\} 5/);
});

test("a stream topic is read on the account of the callers holding it: a flooder's topics pause with CALLER_SHARE_SPENT, a newcomer's do not", async (t) => {
  const service = await startApp(t, { env: ENV, transport: 'socket' });
  for (const symbol of STOCKS.slice(100, 104))
    assert.equal((await service.get(`/api/provider-a/quote?symbol=${symbol}`, FLOODER)).status, 200);
  const flooder = await SseClient.open(t, `${service.url}/api/stream?quote=${STOCKS.slice(110, 113).join(',')}`, FLOODER);
  await flooder.until((s) => s.of('error').length >= 3, 'an error event per topic');
  for (const event of flooder.of('error')) {
    const body = JSON.parse(event.data);
    assert.equal(body.error.code, 'CALLER_SHARE_SPENT');
    // The topic is read again when the share returns, about a minute on, not every 5 s.
    assert.ok(body.retryAfter >= 55, `retryAfter ${body.retryAfter} ${event.data}`);
  }
  const calls = service.sandbox.alphaVantage.count();
  assert.equal(calls, 4, 'the paused topics sent nothing');

  const newcomer = await SseClient.open(t, `${service.url}/api/stream?quote=${STOCKS[120]}`, NEWCOMER);
  await newcomer.until((s) => s.of('quote').length >= 1, 'the newcomer quote');
  assert.equal(service.sandbox.alphaVantage.count(), calls + 1);
});
