import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../helpers/app.js';

/** Sample lines of the Prometheus text format, keyed by `name{labels}` exactly as written. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

function sample(all: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const [key, value] of all) {
    const brace = key.indexOf('{');
    const metric = brace === -1 ? key : key.slice(0, brace);
    if (metric !== name) continue;
    const have = brace === -1 ? [] : key.slice(brace + 1, -1).split(',');
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return value;
  }
  return undefined;
}

test('metrics count requests per route and status, with latency histograms', async (t) => {
  const { get } = await startApp(t);
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote');
  await get('/nope/one');
  await get('/nope/two');
  const res = await get('/metrics');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const all = samples(res.text);
  const quote = { method: 'GET', route: '/api/provider-a/quote' };
  assert.equal(sample(all, 'http_requests_total', { ...quote, status: '200' }), 2);
  assert.equal(sample(all, 'http_requests_total', { ...quote, status: '400' }), 1);
  assert.equal(sample(all, 'http_request_duration_seconds_count', { ...quote, status: '200' }), 2);
  assert.equal(sample(all, 'http_request_duration_seconds_bucket', { ...quote, status: '200', le: '+Inf' }), 2);
  // Unknown paths share one label value, so scanners cannot blow up the series count.
  assert.equal(sample(all, 'http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }), 2);
  assert.ok(!res.text.includes('/nope/one'));
});

test('metrics export cache outcomes, upstream calls and errors, and budget left', async (t) => {
  const { get, sandbox, app } = await startApp(t, { env: { ALPHA_VANTAGE_CALLS_PER_MINUTE: '5', ALPHA_VANTAGE_CALLS_PER_DAY: '500' } });
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote?symbol=IBM');
  sandbox.alphaVantage.setFaults({ fault: 'http5xx', remaining: 1 });
  assert.equal((await get('/api/provider-a/quote?symbol=MSFT')).status, 502);

  let all = samples((await get('/metrics')).text);
  assert.equal(sample(all, 'http_cache_responses_total', { upstream: 'provider-a', outcome: 'HIT' }), 1);
  assert.equal(sample(all, 'http_cache_responses_total', { upstream: 'provider-a', outcome: 'MISS' }), 1);
  const counters = app.deps.cache.counters;
  assert.equal(sample(all, 'cache_lookups_total', { outcome: 'hit' }), 1);
  assert.equal(sample(all, 'cache_lookups_total', { outcome: 'miss' }), counters.miss);
  assert.equal(sample(all, 'cache_single_flight_waits_total', { scope: 'process' }), 0);
  assert.equal(sample(all, 'upstream_calls_total', { upstream: 'provider-a' }), 2);
  assert.equal(sample(all, 'upstream_errors_total', { upstream: 'provider-a' }), 1);
  assert.equal(sample(all, 'upstream_budget_left', { upstream: 'provider-a', window: 'minute' }), 3);
  assert.equal(sample(all, 'upstream_budget_left', { upstream: 'provider-a', window: 'day' }), 498);
  assert.equal(sample(all, 'cache_entries'), 1);
  assert.ok(sample(all, 'upstream_last_success_timestamp_seconds', { upstream: 'provider-a' })! > 1_600_000_000);

  // Counters read from elsewhere keep counting across scrapes rather than restarting.
  await get('/api/provider-a/quote?symbol=IBM');
  all = samples((await get('/metrics')).text);
  assert.equal(sample(all, 'cache_lookups_total', { outcome: 'hit' }), 2);
  assert.equal(sample(all, 'upstream_calls_total', { upstream: 'provider-a' }), 2);
});

test('metrics are not rate limited and are never cached', async (t) => {
  const { get } = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '2' } });
  for (let i = 0; i < 5; i++) {
    const res = await get('/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
  }
});

test('metrics count single-flight waits when concurrent misses share one upstream call', async (t) => {
  const { get, sandbox, app } = await startApp(t);
  sandbox.alphaVantage.setFaults({ latencyMs: 150 });
  const answers = await Promise.all(Array.from({ length: 5 }, () => get('/api/provider-a/quote?symbol=IBM')));
  assert.ok(answers.every((a) => a.status === 200));
  assert.equal(sandbox.alphaVantage.count('/query'), 1, 'one upstream call for five callers');
  const all = samples((await get('/metrics')).text);
  const waits = sample(all, 'cache_single_flight_waits_total', { scope: 'process' });
  assert.equal(waits, app.deps.cache.counters.singleFlightWaits);
  assert.equal(waits, 4);
});
