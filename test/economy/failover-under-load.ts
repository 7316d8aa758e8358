// Three service processes on one Redis topology, a primary lost while requests run: the one scenario the
// Sentinel and the Cluster failover tests share. Calls are counted at one shared simulator: the provider's
// limit holds across the failover, the only 5xx are JSON 503s, and every replica is back on the shared
// store, on the primaries the deployment names now, by itself.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { request } from 'undici';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { tempDir } from '../helpers/config.js';
import { until } from '../store/redis-topology.js';
import { type Answer, ask, maxInWindow, type Replica, startCountingUpstream, startReplica, upstreamEnv } from './replicas.js';

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

export interface StoreStatus {
  kind: string;
  redisReachable: boolean | null;
  settling: boolean;
  failovers: number | null;
  primary: string | null;
  rescues: number | null;
  lastRescue: { at: string; reason: string } | null;
}

export async function storeOf(replica: Replica): Promise<StoreStatus> {
  const res = await request(`${replica.url}/api/system/status`);
  return ((await res.body.json()) as { store: StoreStatus }).store;
}

export interface FailoverScenario {
  kind: 'redis-sentinel' | 'redis-cluster';
  /** How the replicas reach the topology (REDIS_SENTINELS..., REDIS_CLUSTER_NODES). */
  redisEnv: Record<string, string>;
  /** Loses a primary (SIGKILL). */
  fail(): Promise<void>;
  /** The primaries every replica must end on, as status names them (host:port, comma-separated). */
  primaryAfter(): Promise<string>;
}

export async function failoverUnderLoad(t: TestContext, scenario: FailoverScenario): Promise<void> {
  const upstream = await startCountingUpstream(t);
  const env = {
    ...upstreamEnv(upstream),
    ...scenario.redisEnv,
    REDIS_KEY_PREFIX: 'mdp-test:',
    STATE_DIR: tempDir(t),
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '5',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '200',
  };
  const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, env)));
  assert.equal((await storeOf(replicas[0] as Replica)).kind, scenario.kind);

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
  await scenario.fail();
  const failedAt = Date.now();
  const killedAt = answers.length;
  let states: StoreStatus[] = [];
  try {
    await until(
      'every replica on the new primary, settled',
      async () => {
        const primary = await scenario.primaryAfter();
        states = await Promise.all(replicas.map(storeOf));
        return states.every((s) => s.redisReachable === true && !s.settling && (s.failovers ?? 0) >= 1 && s.primary === primary);
      },
      30_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; the replicas' store status: ${JSON.stringify(states)}`);
  }
  const reasons = states.flatMap((s) => (s.lastRescue === null ? [] : [s.lastRescue.reason]));
  t.diagnostic(
    `settled ${((Date.now() - failedAt) / 1000).toFixed(1)} s after the loss; rescues: ${states.map((s) => s.rescues).join(', ')}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}`,
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
}
