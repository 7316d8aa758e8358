// The Redis primary killed under steady load (`npx tsx bench/redis-failover.ts`): three replicas of the real
// entry point on a primary, a replica and three Sentinels started from redis-server (random ports, a temp
// directory); the primary gets SIGKILL after the warm-up. Every upstream is a standalone simulator in this
// process but Alpha Vantage, in its own (bench/provider-a-process.ts: timestamps this process's load would
// delay); the shared Alpha Vantage simulator enforces the same plan as the configured budget (20/min by
// default, 500/day, 1/s), and every call it receives is timestamped: the budget is checked where it matters.
// The plan leaves room after the warm-up, so calls go out right after the failover, in windows that also
// hold the calls sent before the kill: the new primary, which may have lost the last of them, must not
// let the replicas spend them again.
// Reports requests answered, 5xx other than a JSON 503, provider calls against the plan (violations: target
// 0) and the seconds until every replica is back on the shared store. Exit code 1 on any of those failing.
//   FAILOVER_WARM_SECONDS=20  FAILOVER_AFTER_SECONDS=20  FAILOVER_RATE=60 (req/s per replica)
//   FAILOVER_PER_MINUTE=20 (the plan's calls per minute; 5 is the free plan, spent within the warm-up)
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import { maxInWindow } from '../test/economy/replicas.js';
import { RedisSentinelGroup } from '../test/store/redis-topology.js';
import { steadyMixedLoad, tempStateDir } from './load.js';
import { type Child, liveAgainstSandbox, startChild, startService } from './processes.js';

const WARM = Number(process.env.FAILOVER_WARM_SECONDS ?? 20);
const AFTER = Number(process.env.FAILOVER_AFTER_SECONDS ?? 20);
const RATE = Number(process.env.FAILOVER_RATE ?? 60);
const PLAN = { callsPerMinute: Number(process.env.FAILOVER_PER_MINUTE ?? 20), callsPerDay: 500, burstPerSecond: 1 };

interface StoreState {
  reachable: boolean;
  settling: boolean;
  failovers: number;
  primary: string | null;
  budgetStore: string | undefined;
}

async function storeState(replica: Child): Promise<StoreState> {
  const res = await request(`${replica.url}/api/system/status`);
  const body = (await res.body.json()) as {
    store: { redisReachable?: boolean; settling?: boolean; failovers?: number; primary?: string | null };
    upstreams: { id: string; budget: { store: string } | null }[];
  };
  return {
    reachable: body.store.redisReachable === true,
    settling: body.store.settling === true,
    failovers: body.store.failovers ?? 0,
    primary: body.store.primary ?? null,
    budgetStore: body.upstreams.find((u) => u.id === 'provider-a')?.budget?.store,
  };
}

export async function redisFailover(): Promise<boolean> {
  const group = await RedisSentinelGroup.start();
  const sandbox = await startSandbox();
  const provider = await startChild('bench/provider-a-process.ts', { PROVIDER_A_PLAN: JSON.stringify(PLAN) }, /LISTENING (\d+)/);
  const calls: number[] = [];
  createInterface({ input: provider.process.stdout as Readable }).on('line', (line) => {
    const match = /^CALL (\d+)$/.exec(line);
    if (match) calls.push(Number(match[1]));
  });
  const dirs = [0, 1, 2].map(() => tempStateDir('redis-failover'));
  const replicas: Child[] = [];
  try {
    for (const dir of dirs) {
      replicas.push(
        await startService({
          ...liveAgainstSandbox(sandbox, dir.dir),
          ALPHA_VANTAGE_URL: `${provider.url}/query`,
          REDIS_SENTINELS: group.sentinelAddresses,
          REDIS_SENTINEL_NAME: RedisSentinelGroup.NAME,
          REDIS_KEY_PREFIX: 'mdp-bench:',
          ALPHA_VANTAGE_CALLS_PER_MINUTE: String(PLAN.callsPerMinute),
          ALPHA_VANTAGE_CALLS_PER_DAY: String(PLAN.callsPerDay),
        }),
      );
    }
    let answered = 0;
    let otherFailures = 0;
    let json503 = 0;
    const byStatus: Record<string, number> = {};
    const observe = (_kind: unknown, status: number, _headers: unknown, body: string) => {
      answered += 1;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      if (status < 500) return;
      if (status === 503 && /"code":"[A-Z_]+"/.test(body)) json503 += 1;
      else otherFailures += 1;
    };
    let connectionErrors = 0;
    const runs = steadyMixedLoad(
      replicas.map((r) => r.url),
      RATE,
      WARM + AFTER,
      observe,
      () => {
        connectionErrors += 1;
      },
    );
    console.log(
      `\nRedis primary killed under load: 3 replicas x ${RATE} req/s (mixed) on a Sentinel group (primary, replica, 3 Sentinels), provider-A plan and budget ${PLAN.callsPerMinute}/min ${PLAN.callsPerDay}/day 1/s; primary SIGKILLed at ${WARM} s`,
    );
    await sleep(WARM * 1000);
    const killedAt = Date.now();
    await group.kill(group.primary);
    const newPrimary = `127.0.0.1:${group.replica.port}`;
    let backMs = -1;
    while (Date.now() - killedAt < AFTER * 1000) {
      const states = await Promise.all(replicas.map((r) => storeState(r).catch(() => undefined)));
      const back = states.every(
        (s) => s?.reachable && !s.settling && s.failovers >= 1 && s.primary === newPrimary && s.budgetStore === 'redis',
      );
      if (back) {
        backMs = Date.now() - killedAt;
        break;
      }
      await sleep(100);
    }
    await runs;
    const perMinute = maxInWindow(calls, 60_000);
    const perSecond = maxInWindow(calls, 1_000);
    const violations = Math.max(0, perMinute - PLAN.callsPerMinute) + Math.max(0, perSecond - PLAN.burstPerSecond);
    console.log(
      `requests answered: ${answered} (by status ${JSON.stringify(byStatus)}); JSON 503s ${json503}; connection errors ${connectionErrors}`,
    );
    console.log(`5xx other than a JSON 503: ${otherFailures}`);
    console.log(
      `provider-A calls: ${calls.length}; most in any minute ${perMinute} (plan ${PLAN.callsPerMinute}), in any second ${perSecond} (plan ${PLAN.burstPerSecond}); violations: ${violations}`,
    );
    const backAt = backMs < 0 ? Number.POSITIVE_INFINITY : killedAt + backMs;
    const before = calls.filter((at) => at < killedAt).length;
    const during = calls.filter((at) => at >= killedAt && at < backAt).length;
    console.log(
      `  before the kill ${before}, from the kill until every replica settled ${during}, after ${calls.length - before - during}; call times from the kill (s): ${calls.map((at) => ((at - killedAt) / 1000).toFixed(2)).join(', ')}`,
    );
    console.log(
      `every replica back on the shared store (new primary, settled): ${backMs < 0 ? 'NOT within the run' : `${(backMs / 1000).toFixed(1)} s`} after the kill`,
    );
    const ok = otherFailures === 0 && connectionErrors === 0 && violations === 0 && backMs >= 0;
    console.log(ok ? 'redis failover: OK' : 'redis failover: FAILED');
    return ok;
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await sandbox.close();
    await provider.stop();
    await group.stop();
    for (const dir of dirs) dir.remove();
  }
}

export default async function main(): Promise<void> {
  const ok = await redisFailover();
  if (!ok) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
