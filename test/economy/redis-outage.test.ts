// Redis goes away mid-run and comes back (a TCP proxy in front of the real Redis is cut and reopened):
// no 5xx, no budget broken, status says what happened, and recovery needs no restart.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { startApp } from '../helpers/app.js';
import { redisPrefix } from '../store/redis-helper.js';
import { startProxy } from '../store/tcp-proxy.js';
import { ask, maxInWindow, startCountingUpstream } from './replicas.js';

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

test('Redis stopped mid-run and started again: no 5xx, budget kept, recovery without restart', async (t) => {
  const upstream = await startCountingUpstream(t);
  const proxy = await startProxy(t);
  const service = await startApp(t, {
    env: {
      REDIS_URL: proxy.url,
      REDIS_KEY_PREFIX: redisPrefix(t),
      ALPHA_VANTAGE_CALLS_PER_MINUTE: '6',
      ALPHA_VANTAGE_CALLS_PER_DAY: '500',
      ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
      CACHE_QUOTE_FRESH_SECONDS: '1',
    },
    configure: (config) => ({ ...config, alphaVantage: { ...config.alphaVantage, url: upstream.url } }),
  });
  const redis = service.app.deps.store.redis!;
  assert.equal(redis.ready, true);
  const warm = SYMBOLS.slice(0, 3);
  for (const symbol of warm) assert.equal((await ask(`${service.url}/api/provider-a/quote?symbol=${symbol}`)).status, 200);
  let status = (await service.get('/api/system/status')).body;
  assert.equal(status.store.kind, 'redis');
  assert.equal(status.store.redisReachable, true);

  const down = once(redis, 'state:down');
  await proxy.cut();
  await down;
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const during = await Promise.all(
    [...warm, ...warm, ...SYMBOLS.slice(3, 13)].map((symbol) => ask(`${service.url}/api/provider-a/quote?symbol=${symbol}`)),
  );
  for (const answer of during) assert.ok(answer.status < 500, `status ${answer.status} while Redis is down`);
  for (const answer of during.slice(0, 6)) assert.equal(answer.cache, 'STALE', 'warm symbols are served from local state');
  for (const answer of during.filter((a) => a.status === 429)) assert.equal(answer.code, 'QUOTA_EXHAUSTED');
  assert.ok(maxInWindow(upstream.calls, 60_000) <= 6, `upstream saw ${upstream.calls.length} calls in a minute`);

  status = (await service.get('/api/system/status')).body;
  assert.equal(status.status === 'ok', false);
  assert.equal(status.store.redisReachable, false);
  assert.equal(status.store.fallback, true);
  assert.match(status.store.message, /local state/);
  const budget = status.upstreams.find((u: { budget: { store: string } | null }) => u.budget?.store === 'local-fallback');
  assert.ok(budget, 'the provider-A budget reports its local fallback');

  const up = once(redis, 'state:ready');
  await proxy.open();
  await up;
  const after = await ask(`${service.url}/api/provider-a/quote?symbol=${warm[0]}`);
  assert.equal(after.status, 200);
  status = (await service.get('/api/system/status')).body;
  assert.equal(status.store.redisReachable, true);
  assert.equal(status.store.fallback, false);
  assert.ok(maxInWindow(upstream.calls, 60_000) <= 6);
});
