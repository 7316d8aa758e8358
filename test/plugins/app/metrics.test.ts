import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/core/config.js';
import { httpGet, startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

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
  const { get, scrape } = await startApp(t, { env: ANSWERS_ENV });
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote');
  await get('/nope/one');
  await get('/nope/two');
  const res = await scrape();
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const all = samples(res.text);
  const quote = { method: 'GET', route: '/api/provider-a/quote' };
  assert.equal(sample(all, 'mdp_http_requests_total', { ...quote, status: '200' }), 2);
  assert.equal(sample(all, 'mdp_http_requests_total', { ...quote, status: '400' }), 1);
  assert.equal(sample(all, 'mdp_http_request_duration_seconds_count', { ...quote, status: '200' }), 2);
  assert.equal(sample(all, 'mdp_http_request_duration_seconds_bucket', { ...quote, status: '200', le: '+Inf' }), 2);
  // Unknown paths share one label value, so scanners cannot blow up the series count.
  assert.equal(sample(all, 'mdp_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }), 2);
  assert.ok(!res.text.includes('/nope/one'));
});

test('metrics export cache outcomes, upstream calls and errors, and budget left', async (t) => {
  const { get, scrape, sandbox, app } = await startApp(t, {
    env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '5', ALPHA_VANTAGE_CALLS_PER_DAY: '500' },
  });
  await get('/api/provider-a/quote?symbol=IBM');
  await get('/api/provider-a/quote?symbol=IBM');
  sandbox.alphaVantage.setFaults({ fault: 'http5xx', remaining: 1 });
  assert.equal((await get('/api/provider-a/quote?symbol=MSFT')).status, 502);

  let all = samples((await scrape()).text);
  assert.equal(sample(all, 'mdp_http_cache_responses_total', { upstream: 'provider-a', outcome: 'HIT' }), 1);
  assert.equal(sample(all, 'mdp_http_cache_responses_total', { upstream: 'provider-a', outcome: 'MISS' }), 1);
  const counters = app.deps.cache.counters;
  assert.equal(sample(all, 'mdp_cache_lookups_total', { outcome: 'hit' }), 1);
  assert.equal(sample(all, 'mdp_cache_lookups_total', { outcome: 'miss' }), counters.miss);
  assert.equal(sample(all, 'mdp_cache_single_flight_waits_total', { scope: 'process' }), 0);
  assert.equal(sample(all, 'mdp_upstream_calls_total', { upstream: 'provider-a' }), 2);
  assert.equal(sample(all, 'mdp_upstream_errors_total', { upstream: 'provider-a' }), 1);
  assert.equal(sample(all, 'mdp_upstream_budget_left_calls', { upstream: 'provider-a', window: 'minute' }), 3);
  assert.equal(sample(all, 'mdp_upstream_budget_left_calls', { upstream: 'provider-a', window: 'day' }), 498);
  assert.equal(sample(all, 'mdp_cache_entries'), 1);
  assert.ok(sample(all, 'mdp_upstream_last_success_timestamp_seconds', { upstream: 'provider-a' })! > 1_600_000_000);

  // Counters read from elsewhere keep counting across scrapes rather than restarting.
  await get('/api/provider-a/quote?symbol=IBM');
  all = samples((await scrape()).text);
  assert.equal(sample(all, 'mdp_cache_lookups_total', { outcome: 'hit' }), 2);
  assert.equal(sample(all, 'mdp_upstream_calls_total', { upstream: 'provider-a' }), 2);
});

test('metrics are not rate limited and are never cached', async (t) => {
  const { scrape } = await startApp(t, { env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '2' } });
  for (let i = 0; i < 5; i++) {
    const res = await scrape();
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
  }
});

test('metrics count single-flight waits when concurrent misses share one upstream call', async (t) => {
  const { get, scrape, sandbox, app } = await startApp(t, { env: ANSWERS_ENV });
  sandbox.alphaVantage.setFaults({ latencyMs: 150 });
  const answers = await Promise.all(Array.from({ length: 5 }, () => get('/api/provider-a/quote?symbol=IBM')));
  assert.ok(answers.every((a) => a.status === 200));
  assert.equal(sandbox.alphaVantage.count('/query'), 1, 'one upstream call for five callers');
  const all = samples((await scrape()).text);
  const waits = sample(all, 'mdp_cache_single_flight_waits_total', { scope: 'process' });
  assert.equal(waits, app.deps.cache.counters.singleFlightWaits);
  assert.equal(waits, 4);
});

test('by default /metrics is not on the public port; the loopback listener serves it, without CORS', async (t) => {
  const { get, scrape, metricsUrl } = await startApp(t, { env: ANSWERS_ENV });
  const publicPort = await get('/metrics', { origin: 'https://evil.example' });
  assert.equal(publicPort.status, 404);
  assert.equal(publicPort.body.error.code, 'NOT_FOUND');
  assert.match(String(metricsUrl), /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const res = await scrape({ origin: 'https://evil.example' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['access-control-allow-origin'], undefined);
  assert.match(res.text, /^mdp_http_requests_total/m);
  const other = await httpGet(String(metricsUrl).replace(/\/metrics$/, '/api/system/status'));
  assert.equal(other.status, 404, 'the metrics listener serves nothing else');
  assert.equal(other.body.error.code, 'NOT_FOUND');
});

test('with METRICS_TOKEN, /metrics is on the public port for a bearer of the token only, and the token is never shown', async (t) => {
  const token = 'metrics-token-0123456789abcdef';
  const running = await startApp(t, { env: { ...ANSWERS_ENV, METRICS_TOKEN: token, METRICS_PORT: 'off' } });
  assert.equal(running.metricsUrl, undefined, 'METRICS_PORT=off: no listener');
  for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, token, `Basic ${token}`]) {
    const res = await running.get('/metrics', authorization === undefined ? {} : { authorization });
    assert.equal(res.status, 404, String(authorization));
    assert.equal(res.body.error.code, 'NOT_FOUND');
  }
  const res = await running.get('/metrics', { authorization: `Bearer ${token}`, origin: 'https://dashboard.example' });
  assert.equal(res.status, 200);
  assert.match(res.text, /^mdp_/m);
  assert.equal(res.headers['access-control-allow-origin'], undefined, 'no CORS on internals');
  // The secret scan at teardown (test/helpers/app.ts) fails the test if the token appears in a response or a log line.
});

test('the metrics listener asks for the token too when one is set', async (t) => {
  const token = 'metrics-token-fedcba9876543210';
  const { scrape } = await startApp(t, { env: { ...ANSWERS_ENV, METRICS_TOKEN: token } });
  assert.equal((await scrape()).status, 404);
  assert.equal((await scrape({ authorization: `Bearer ${token}` })).status, 200);
});

/** The names of state sets (`_state`, `_mode`: one series per value) and flags (`_open`). */
const STATE = /_(state|mode|open)$/;

test('metric names: the service own carry the mdp_ prefix and their unit; only standard process metrics do not', async (t) => {
  const { get, scrape } = await startApp(t, { env: ANSWERS_ENV });
  await get('/api/provider-a/quote?symbol=IBM');
  const { text } = await scrape();
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
  const own = types.filter((m) => m.name.startsWith('mdp_'));
  assert.ok(own.length >= 12, `${own.length} service metrics`);
  const others = types.filter((m) => !m.name.startsWith('mdp_')).map((m) => m.name);
  assert.deepEqual(
    others.filter((name) => !/^(process|nodejs)_/.test(name)),
    [],
    'unprefixed metrics are prom-client defaults only',
  );
  const values = samples(text);
  for (const { name, type } of own) {
    if (type === 'counter') assert.match(name, /_total$/, name);
    if (type === 'histogram') assert.match(name, /_(seconds|bytes)$/, name);
    // A gauge ends in its unit or what it counts; a state set (one series per value) or a flag is 0 or 1.
    if (type === 'gauge' && !STATE.test(name))
      assert.match(name, /_(seconds|bytes|calls|entries|viewers|replicas|symbols|sessions)$/, name);
    if (type === 'gauge' && STATE.test(name)) {
      for (const [series, value] of values) if (series.split('{')[0] === name) assert.ok(value === 0 || value === 1, `${series} ${value}`);
    }
  }
});

test('metrics configuration is validated', () => {
  assert.throws(
    () => loadConfig({ METRICS_TOKEN: 'short' }),
    (e: unknown) => e instanceof ConfigError && e.problems.some((p) => /METRICS_TOKEN/.test(p)),
  );
  assert.throws(() => loadConfig({ METRICS_PORT: '70000' }), ConfigError);
  assert.deepEqual(loadConfig({}).metrics, { port: 9464, host: '127.0.0.1', token: undefined, portExplicit: false });
  assert.equal(loadConfig({ METRICS_PORT: '9464' }).metrics.portExplicit, true, 'the default port, chosen explicitly');
  assert.equal(loadConfig({ METRICS_PORT: 'off' }).metrics.port, undefined);
});
