// The gauges the alerts read (deploy/prometheus/alerts.yml), scraped from a running service: each says what the
// state it reads says, a state as one series per value with 1 for the current one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { SseClient } from '../../stream/sse-client.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';
import { until } from '../../store/redis-topology.js';

/** `name{labels} value` lines of a scrape, as a map from the series (labels sorted) to its value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels = (match[2] ?? '').split(',').filter(Boolean).sort().join(',');
    out.set(`${match[1]}{${labels}}`, Number(match[3]));
  }
  return out;
}

function series(name: string, labels: Record<string, string> = {}): string {
  return `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',')}}`;
}

test('an upstream whose circuit opened is 1 under state open (0 under closed), its openings counted, its limits beside its use', async (t) => {
  const { get, scrape, sandbox } = await startApp(t, {
    env: { ...UNCAPPED, ...NO_FALLBACK, ALPHA_VANTAGE_CALLS_PER_DAY: '40' },
  });
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).status, 200);
  let all = samples((await scrape()).text);
  assert.equal(all.get(series('mdp_upstream_circuit_state', { upstream: 'provider-a', state: 'closed' })), 1);
  assert.equal(all.get(series('mdp_upstream_circuit_state', { upstream: 'provider-a', state: 'open' })), 0);
  assert.equal(all.get(series('mdp_upstream_budget_limit_calls', { upstream: 'provider-a', window: 'day' })), 40);
  assert.equal(all.get(series('mdp_upstream_budget_used_calls', { upstream: 'provider-a', window: 'day' })), 1);
  assert.equal(all.has(series('mdp_upstream_budget_limit_calls', { upstream: 'provider-a', window: 'minute' })), false, 'no cap, no limit');

  sandbox.alphaVantage.setFaults({ fault: 'http5xx', remaining: 5 });
  for (const symbol of ['MSFT', 'AAPL', 'NVDA', 'AMZN', 'META'])
    assert.equal((await get(`/api/provider-a/quote?symbol=${symbol}`)).status, 502);
  all = samples((await scrape()).text);
  assert.equal(all.get(series('mdp_upstream_circuit_state', { upstream: 'provider-a', state: 'open' })), 1);
  assert.equal(all.get(series('mdp_upstream_circuit_state', { upstream: 'provider-a', state: 'closed' })), 0);
  assert.equal(all.get(series('mdp_upstream_circuit_openings_total', { upstream: 'provider-a' })), 1);
});

test('the store mode is embedded without Redis and shared with it, since the store opened; failovers and replicas beside', async (t) => {
  const before = Date.now() / 1000;
  const embedded = samples((await (await startApp(t)).scrape()).text);
  assert.equal(embedded.get(series('mdp_store_mode', { mode: 'embedded' })), 1);
  assert.equal(embedded.get(series('mdp_store_mode', { mode: 'shared' })), 0);
  assert.equal(embedded.get(series('mdp_store_failovers_total')), 0);
  assert.equal(embedded.get(series('mdp_store_replicas')), 1);

  const shared = samples((await (await startApp(t, { env: { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) } })).scrape()).text);
  assert.equal(shared.get(series('mdp_store_mode', { mode: 'shared' })), 1);
  assert.equal(shared.get(series('mdp_store_mode', { mode: 'local_fallback' })), 0);
  assert.equal(shared.get(series('mdp_store_mode', { mode: 'settling' })), 0);
  const since = shared.get(series('mdp_store_mode_since_timestamp_seconds'))!;
  assert.ok(since >= before - 1 && since <= Date.now() / 1000, `since ${since}`);
});

test('the broker session gauge follows the gateway without anyone asking: a logged-out gateway reads unauthenticated after a scrape or two', async (t) => {
  const { scrape, sandbox } = await startApp(t);
  sandbox.ibkr.setSession('logged_out');
  const unauthenticated = series('mdp_broker_session_state', { broker: 'ibkr', state: 'unauthenticated' });
  // The first scrape starts the check; it answers at once or for the next scrape.
  await until('the session gauge', async () => samples((await scrape()).text).get(unauthenticated) === 1, 10_000);
  const all = samples((await scrape()).text);
  assert.equal(all.get(series('mdp_broker_session_state', { broker: 'ibkr', state: 'connected' })), 0);
  assert.ok(sandbox.ibkr.gatewayCount('/iserver/auth/status') >= 1, 'checked at the gateway');
});

test('the broker quote feed: connected with its symbols once asked for one, and the age of its newest tick', async (t) => {
  const { get, scrape } = await startApp(t);
  const before = samples((await scrape()).text);
  assert.equal(before.get(series('mdp_broker_stream_symbols', { broker: 'ibkr' })), 0);
  assert.equal(before.has(series('mdp_broker_stream_last_tick_age_seconds', { broker: 'ibkr' })), false, 'no tick yet');
  assert.equal((await get('/api/broker/quotes?symbols=AAPL')).status, 200);
  let all = new Map<string, number>();
  await until(
    'a tick on the feed',
    async () => {
      all = samples((await scrape()).text);
      return all.has(series('mdp_broker_stream_last_tick_age_seconds', { broker: 'ibkr' }));
    },
    10_000,
  );
  assert.equal(all.get(series('mdp_broker_stream_state', { broker: 'ibkr', state: 'connected' })), 1);
  assert.equal(all.get(series('mdp_broker_stream_state', { broker: 'ibkr', state: 'disconnected' })), 0);
  assert.equal(all.get(series('mdp_broker_stream_symbols', { broker: 'ibkr' })), 1);
  assert.ok(all.get(series('mdp_broker_stream_last_tick_age_seconds', { broker: 'ibkr' }))! < 60);
});

test('the US market reads open on a Tuesday at 10:00 New York time and closed at 17:00 and on a Saturday', async (t) => {
  const { scrape } = await startApp(t, { env: { BROKER: 'none' } });
  const open = series('mdp_market_open', { market: 'us' });
  const at = async (utc: number) => {
    t.mock.timers.enable({ apis: ['Date'], now: utc });
    try {
      return samples((await scrape()).text).get(open);
    } finally {
      t.mock.timers.reset();
    }
  };
  assert.equal(await at(Date.UTC(2026, 10, 24, 15, 0)), 1, 'Tuesday 24 November 2026, 10:00 EST');
  assert.equal(await at(Date.UTC(2026, 10, 24, 22, 0)), 0, '17:00 EST');
  assert.equal(await at(Date.UTC(2026, 10, 28, 15, 0)), 0, 'a Saturday');
});

test('stream viewers count the open streams against STREAM_MAX_CONNECTIONS', async (t) => {
  const { url, scrape } = await startApp(t, { env: { STREAM_MAX_CONNECTIONS: '7', BROKER: 'none' } });
  const viewers = series('mdp_stream_viewers');
  assert.equal(samples((await scrape()).text).get(viewers), 0);
  const stream = await SseClient.open(t, `${url}/api/stream?status=true`);
  const all = samples((await scrape()).text);
  assert.equal(all.get(viewers), 1);
  assert.equal(all.get(series('mdp_stream_max_viewers')), 7);
  stream.close();
  await until('the stream to close', async () => samples((await scrape()).text).get(viewers) === 0, 5_000);
});
