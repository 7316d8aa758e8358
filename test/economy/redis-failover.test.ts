// Three service processes on a primary, a replica and three Sentinels; the primary killed (SIGKILL) while
// requests run. Calls are counted at one shared simulator: the provider's limit holds across the failover,
// the only 5xx are JSON 503s, and every replica is back on the shared store by itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, request, setGlobalDispatcher } from 'undici';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { tempDir } from '../helpers/config.js';
import { RedisSentinelGroup, until } from '../store/redis-topology.js';
import { type Answer, ask, maxInWindow, type Replica, startCountingUpstream, startReplica, upstreamEnv } from './replicas.js';

setGlobalDispatcher(new Agent({ connections: 100, pipelining: 1 }));

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

interface StoreStatus {
  kind: string;
  redisReachable: boolean | null;
  settling: boolean;
  failovers: number | null;
  primary: string | null;
}

async function storeOf(replica: Replica): Promise<StoreStatus> {
  const res = await request(`${replica.url}/api/system/status`);
  return ((await res.body.json()) as { store: StoreStatus }).store;
}

test('the Sentinel primary killed under load: no provider limit broken, only JSON 503s, every replica back on the new primary', async (t) => {
  const group = await RedisSentinelGroup.start();
  t.after(() => group.stop());
  const upstream = await startCountingUpstream(t);
  const env = {
    ...upstreamEnv(upstream),
    REDIS_SENTINELS: group.sentinelAddresses,
    REDIS_SENTINEL_NAME: RedisSentinelGroup.NAME,
    REDIS_KEY_PREFIX: 'mdp-test:',
    STATE_DIR: tempDir(t),
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '5',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '200',
  };
  const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, env)));
  assert.equal((await storeOf(replicas[0] as Replica)).kind, 'redis-sentinel');

  const answers: Answer[] = [];
  let stop = false;
  const load = Array.from({ length: 6 }, async (_, worker) => {
    for (let i = 0; !stop; i += 1) {
      const replica = replicas[(worker + i) % 3] as Replica;
      const symbol = SYMBOLS[(worker * 7 + i) % 12] as string;
      answers.push(await ask(`${replica.url}/api/provider-a/quote?symbol=${symbol}`));
    }
  });
  await until('the first provider calls', async () => upstream.calls.length >= 3);
  await group.kill(group.primary);
  const killedAt = answers.length;
  await until(
    'every replica on the new primary, settled',
    async () => {
      const states = await Promise.all(replicas.map(storeOf));
      return states.every(
        (s) => s.redisReachable === true && !s.settling && (s.failovers ?? 0) >= 1 && s.primary === `127.0.0.1:${group.replica.port}`,
      );
    },
    30_000,
  );
  const settledAt = answers.length;
  await until('requests answered after the failover', async () => answers.length >= settledAt + 60);
  stop = true;
  await Promise.all(load);

  assert.ok(maxInWindow(upstream.calls, 61_200) <= 5, `provider calls in a minute: ${maxInWindow(upstream.calls, 61_200)}`);
  const failures = answers.filter((a) => a.status >= 500);
  assert.ok(
    failures.every((a) => a.status === 503 && a.code !== undefined),
    JSON.stringify(failures.find((a) => a.status !== 503 || a.code === undefined)),
  );
  assert.ok(
    answers.slice(killedAt).some((a) => a.status === 200),
    'answers served during and after the failover',
  );
});
