// Real service processes: three replicas sharing one real Redis, and a replica killed with SIGKILL and
// restarted on its embedded store. Calls are counted at one shared simulator.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { Agent, setGlobalDispatcher } from 'undici';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from '../store/redis-helper.js';
import { ask, startCountingUpstream, startReplica, upstreamEnv } from './replicas.js';

setGlobalDispatcher(new Agent({ connections: 1_000, pipelining: 1 }));

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

test('three replicas on one Redis: one cold key costs one call, and together they keep the budget', async (t) => {
  const upstream = await startCountingUpstream(t);
  const prefix = redisPrefix(t);
  const env = {
    ...upstreamEnv(upstream),
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    STATE_DIR: tempDir(t),
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '5',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '300',
  };
  const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, env)));

  const cold = await Promise.all(
    replicas.flatMap((r) => Array.from({ length: 200 }, () => ask(`${r.url}/api/provider-a/quote?symbol=IBM`))),
  );
  assert.ok(
    cold.every((a) => a.status === 200),
    JSON.stringify(cold.find((a) => a.status !== 200)),
  );
  assert.equal(upstream.calls.length, 1, 'one call for one cold key across three replicas');

  const burst = SYMBOLS.slice(0, 30);
  const answers = await Promise.all(
    burst.flatMap((symbol, i) =>
      [replicas[i % 3]!, replicas[(i + 1) % 3]!].map((r) => ask(`${r.url}/api/provider-a/quote?symbol=${symbol}`)),
    ),
  );
  assert.ok(upstream.calls.length <= 5, `upstream saw ${upstream.calls.length} calls`);
  // The spacing the replicas keep together is the shared ledger's: every send slot 300 ms after the last.
  const redis = new Redis(REDIS_URL);
  t.after(() => redis.quit());
  const [ledger] = await redis.keys(`${prefix}{budget:*alphaVantage*}:calls`);
  const slots = (await redis.zrange(ledger as string, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
  const slotGaps = slots.slice(1).map((at, i) => at - (slots[i] as number));
  assert.equal(slots.length, upstream.calls.length, 'one ledger slot per call sent');
  assert.ok(
    slotGaps.every((gap) => gap >= 300),
    `gaps between send slots: ${slotGaps.join(', ')} ms`,
  );
  // Spacing is decided on the ledger's clock (Redis TIME) and checked there, exactly. Arrival stamps are taken
  // on this process's event loop, shared with the simulator and the load, so no bound on their gaps would
  // say anything about the spacing that a wider or narrower number did not.
  for (const answer of answers) {
    assert.ok(answer.status === 200 || answer.status === 429, `status ${answer.status}`);
    // One caller (this process): its share is all but the call kept for others.
    if (answer.status === 429) assert.ok(answer.code === 'CALLER_SHARE_SPENT' && answer.retryAfter! >= 1, JSON.stringify(answer));
  }
  const served = answers.filter((a) => a.status === 200).length;
  assert.ok(served >= upstream.calls.length - 1, 'every paid call is served (to both replicas asking for it)');
});

test('kill -9 and restart on the embedded store: the day count and the last good values are still there', async (t) => {
  const upstream = await startCountingUpstream(t);
  const env = {
    ...upstreamEnv(upstream),
    STATE_DIR: tempDir(t),
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    // Five a day: one caller alone has four (one is kept for others).
    ALPHA_VANTAGE_CALLS_PER_DAY: '5',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    CACHE_QUOTE_FRESH_SECONDS: '1',
  };
  const first = await startReplica(t, env);
  for (const symbol of ['AAPL', 'MSFT', 'NVDA'])
    assert.equal((await ask(`${first.url}/api/provider-a/quote?symbol=${symbol}`)).status, 200);
  assert.equal(upstream.calls.length, 3);
  await first.kill('SIGKILL');
  assert.equal(first.child.signalCode, 'SIGKILL');

  const second = await startReplica(t, env);
  const status = await ask(`${second.url}/api/system/status`);
  assert.equal(status.status, 200);
  // The day count survived, and who spent it: one call is left of this caller's four.
  assert.equal((await ask(`${second.url}/api/provider-a/quote?symbol=AMZN`)).status, 200);
  const refused = await ask(`${second.url}/api/provider-a/quote?symbol=TSLA`);
  assert.equal(refused.status, 429);
  assert.equal(refused.code, 'CALLER_SHARE_SPENT');
  assert.ok(refused.retryAfter! > 86_000, `Retry-After ${refused.retryAfter}`);
  // The last good value is served from the store (stale by now: 1 s fresh window), budget or not.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const again = await ask(`${second.url}/api/provider-a/quote?symbol=AAPL`);
  assert.equal(again.status, 200);
  assert.equal(again.cache, 'STALE');
  assert.equal(upstream.calls.length, 4);
});
