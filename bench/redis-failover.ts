// Successive Redis failovers under steady load (`npm run bench:failover`, or `npx tsx bench/redis-failover.ts`
// after `npm run build`): three replicas of the real entry point on a Sentinel group (a primary, a replica,
// three Sentinels), then on a Cluster of three primaries with a replica each, all started from redis-server
// (random ports, a temp directory). After the warm-up, each failover SIGKILLs the primary (on the Cluster,
// the one holding provider A's budget ledger), waits until every replica is back on the shared store, on
// the primaries the deployment names now and settled (its budget shared again), then starts the killed node
// again as a replica (the Sentinel group's new replica, the Cluster's replica of the node promoted in its
// place), and kills the next primary FAILOVER_BETWEEN_SECONDS after the last kill (the Sentinels retry a
// failover of one primary name no sooner than twice their failover-timeout, 10 s here).
// Every upstream is a standalone simulator in this process but Alpha Vantage, in its own
// (bench/provider-a-process.ts: timestamps this process's load would delay); the shared Alpha Vantage
// simulator enforces the same plan as the configured budget (20/min by default, 500/day, 1/s), and every
// call it receives is timestamped: the budget is checked where it matters. The plan leaves room after the
// warm-up, so calls go out around each failover, in windows that also hold the calls sent before the kill.
// Prints, per failover, the seconds until every replica settled (and each replica's), the watch's rescues
// and the busiest minute of provider calls around it; then requests by status, 5xx other than a JSON 503,
// and provider calls against the plan. Exit code 1 when a failover does not settle within
// FAILOVER_SETTLE_LIMIT_SECONDS, or on any violation, other 5xx or connection error.
//   FAILOVER_TOPOLOGY=sentinel,cluster  FAILOVER_COUNT=10  FAILOVER_SETTLE_LIMIT_SECONDS=15
//   FAILOVER_WARM_SECONDS=20  FAILOVER_BETWEEN_SECONDS=15  FAILOVER_AFTER_SECONDS=20
//   FAILOVER_RATE=60 (req/s per replica)  FAILOVER_PER_MINUTE=20 (the plan; 5 is the free plan, spent within the warm-up)
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import { maxInWindow } from '../test/economy/replicas.js';
import { RedisCluster, RedisSentinelGroup } from '../test/store/redis-topology.js';
import { steadyMixedLoad, tempStateDir } from './load.js';
import { type Child, liveAgainstSandbox, startChild, startService } from './processes.js';

const TOPOLOGIES = (process.env.FAILOVER_TOPOLOGY ?? 'sentinel,cluster').split(',');
const COUNT = Number(process.env.FAILOVER_COUNT ?? 10);
const SETTLE_LIMIT = Number(process.env.FAILOVER_SETTLE_LIMIT_SECONDS ?? 15);
const WARM = Number(process.env.FAILOVER_WARM_SECONDS ?? 20);
const BETWEEN = Number(process.env.FAILOVER_BETWEEN_SECONDS ?? 15);
const AFTER = Number(process.env.FAILOVER_AFTER_SECONDS ?? 20);
const RATE = Number(process.env.FAILOVER_RATE ?? 60);
const PLAN = { callsPerMinute: Number(process.env.FAILOVER_PER_MINUTE ?? 20), callsPerDay: 500, burstPerSecond: 1 };
const PREFIX = 'mdp-bench:';
/** How long a failover is watched before it is reported as not settled. */
const WATCH_MS = 60_000;

interface StoreState {
  settled: boolean;
  failovers: number;
  primary: string | null;
  rescues: number;
}

async function storeState(replica: Child): Promise<StoreState> {
  const res = await request(`${replica.url}/api/system/status`);
  const body = (await res.body.json()) as {
    store: { redisReachable?: boolean; settling?: boolean; failovers?: number; primary?: string | null; rescues?: number };
    upstreams: { id: string; budget: { store: string } | null }[];
  };
  const budgetStore = body.upstreams.find((u) => u.id === 'provider-a')?.budget?.store;
  return {
    settled: body.store.redisReachable === true && body.store.settling !== true && budgetStore === 'redis',
    failovers: body.store.failovers ?? 0,
    primary: body.store.primary ?? null,
    rescues: body.store.rescues ?? 0,
  };
}

/** One primary lost: what to call it, the primaries every replica must end on (undefined until known), and how to bring the node back. */
interface Loss {
  label: string;
  expected(): Promise<string | undefined>;
  rejoin(): Promise<void>;
}

interface Deployment {
  title: string;
  env: Record<string, string>;
  fail(): Promise<Loss>;
  stop(): Promise<void>;
}

async function sentinelDeployment(): Promise<Deployment> {
  const group = await RedisSentinelGroup.start();
  return {
    title: 'a Sentinel group (a primary, a replica, 3 Sentinels)',
    env: { REDIS_SENTINELS: group.sentinelAddresses, REDIS_SENTINEL_NAME: RedisSentinelGroup.NAME },
    fail: async () => {
      const [lost, promoted] = [group.primary, group.replica];
      await group.kill(lost);
      return {
        label: `primary :${lost.port} killed, replica :${promoted.port} promoted`,
        expected: async () => `127.0.0.1:${promoted.port}`,
        rejoin: () => group.rejoin(lost),
      };
    },
    stop: () => group.stop(),
  };
}

async function clusterDeployment(): Promise<Deployment> {
  const cluster = await RedisCluster.start(3, 1);
  return {
    title: 'a Cluster (3 primaries, a replica each)',
    env: { REDIS_CLUSTER_NODES: cluster.seeds },
    fail: async () => {
      const before = await cluster.primaries();
      const ledger = await cluster.primaryHolding(`${PREFIX}{budget:*}:calls`);
      const lost = ledger ?? (cluster.nodes.find((n) => before.includes(`127.0.0.1:${n.port}`)) as (typeof cluster.nodes)[number]);
      await cluster.kill(lost);
      return {
        label: `primary :${lost.port}${ledger === undefined ? '' : ' (the budget ledger’s)'} killed`,
        expected: async () => {
          const now = await cluster.primaries();
          return now.length === before.length && !now.includes(`127.0.0.1:${lost.port}`) ? now.join(',') : undefined;
        },
        rejoin: () => cluster.rejoin(lost),
      };
    },
    stop: () => cluster.stop(),
  };
}

interface Outcome {
  /** Seconds from the kill until every replica was settled on the expected primaries; undefined if not within WATCH_MS. */
  all: number | undefined;
  each: (number | undefined)[];
}

async function watchSettling(replicas: Child[], killedAt: number, loss: Loss, failoversBefore: number[]): Promise<Outcome> {
  const each: (number | undefined)[] = replicas.map(() => undefined);
  while (Date.now() - killedAt < WATCH_MS) {
    const expected = await loss.expected().catch(() => undefined);
    const states = await Promise.all(replicas.map((r) => storeState(r).catch(() => undefined)));
    const seconds = (Date.now() - killedAt) / 1000;
    const done = states.map(
      (s, i) =>
        s !== undefined && expected !== undefined && s.settled && s.primary === expected && s.failovers > (failoversBefore[i] as number),
    );
    done.forEach((d, i) => {
      if (d && each[i] === undefined) each[i] = seconds;
    });
    if (done.every(Boolean)) return { all: seconds, each };
    await sleep(100);
  }
  return { all: undefined, each };
}

const fmt = (seconds: number | undefined) => (seconds === undefined ? 'never' : `${seconds.toFixed(1)} s`);

async function failoversOn(deployment: Deployment): Promise<boolean> {
  const sandbox = await startSandbox();
  const provider = await startChild('bench/provider-a-process.ts', { PROVIDER_A_PLAN: JSON.stringify(PLAN) }, /LISTENING (\d+)/);
  const calls: number[] = [];
  createInterface({ input: provider.process.stdout as Readable }).on('line', (line) => {
    const match = /^CALL (\d+)$/.exec(line);
    if (match) calls.push(Number(match[1]));
  });
  const dirs = [0, 1, 2].map(() => tempStateDir('redis-failover'));
  const replicas: Child[] = [];
  const stopLoad = new AbortController();
  try {
    for (const dir of dirs) {
      replicas.push(
        await startService({
          ...liveAgainstSandbox(sandbox, dir.dir),
          ...deployment.env,
          ALPHA_VANTAGE_URL: `${provider.url}/query`,
          REDIS_KEY_PREFIX: PREFIX,
          ALPHA_VANTAGE_CALLS_PER_MINUTE: String(PLAN.callsPerMinute),
          ALPHA_VANTAGE_CALLS_PER_DAY: String(PLAN.callsPerDay),
        }),
      );
    }
    let otherFailures = 0;
    let json503 = 0;
    const byStatus: Record<string, number> = {};
    let connectionErrors = 0;
    const runs = steadyMixedLoad(
      replicas.map((r) => r.url),
      RATE,
      3_600,
      (_kind, status, _headers, body) => {
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        if (status < 500) return;
        if (status === 503 && /"code":"[A-Z_]+"/.test(body)) json503 += 1;
        else otherFailures += 1;
      },
      () => {
        connectionErrors += 1;
      },
      stopLoad.signal,
    );
    console.log(
      `\n${COUNT} successive failovers of ${deployment.title} under load: 3 replicas x ${RATE} req/s (mixed), provider-A plan and budget ${PLAN.callsPerMinute}/min ${PLAN.callsPerDay}/day 1/s; first kill after ${WARM} s, one every ${BETWEEN} s at most, the killed node back as a replica in between`,
    );
    await sleep(WARM * 1000);
    const settled: (number | undefined)[] = [];
    for (let n = 1; n <= COUNT; n += 1) {
      const failoversBefore = (await Promise.all(replicas.map(storeState))).map((s) => s.failovers);
      const killedAt = Date.now();
      const loss = await deployment.fail();
      const outcome = await watchSettling(replicas, killedAt, loss, failoversBefore);
      settled.push(outcome.all);
      const rescues = (await Promise.all(replicas.map((r) => storeState(r).catch(() => undefined)))).map((s) => s?.rescues ?? '?');
      const around = calls.filter((at) => at >= killedAt - 60_000 && at < killedAt + (outcome.all ?? WATCH_MS / 1000) * 1000 + 60_000);
      console.log(
        `failover ${String(n).padStart(2)}: ${loss.label}; every replica settled in ${fmt(outcome.all)} (each: ${outcome.each.map(fmt).join(', ')}); rescues so far ${rescues.join(', ')}; busiest minute around it ${maxInWindow(around, 60_000)} provider calls (plan ${PLAN.callsPerMinute})`,
      );
      await loss.rejoin();
      const next = killedAt + BETWEEN * 1000 - Date.now();
      if (n < COUNT && next > 0) await sleep(next);
    }
    await sleep(AFTER * 1000);
    stopLoad.abort();
    await runs;

    const perMinute = maxInWindow(calls, 60_000);
    const perSecond = maxInWindow(calls, 1_000);
    const violations = Math.max(0, perMinute - PLAN.callsPerMinute) + Math.max(0, perSecond - PLAN.burstPerSecond);
    const within = settled.filter((s) => s !== undefined && s <= SETTLE_LIMIT).length;
    const known = settled.filter((s): s is number => s !== undefined).sort((a, b) => a - b);
    console.log(
      `settled within ${SETTLE_LIMIT} s: ${within} of ${COUNT} (median ${fmt(known[Math.floor(known.length / 2)])}, slowest ${fmt(known.length === COUNT ? known.at(-1) : undefined)})`,
    );
    console.log(
      `requests by status ${JSON.stringify(byStatus)}; JSON 503s ${json503}; 5xx other than a JSON 503: ${otherFailures}; connection errors ${connectionErrors}`,
    );
    console.log(
      `provider-A calls: ${calls.length}; most in any minute ${perMinute} (plan ${PLAN.callsPerMinute}), in any second ${perSecond} (plan ${PLAN.burstPerSecond}); violations: ${violations}`,
    );
    const ok = within === COUNT && otherFailures === 0 && connectionErrors === 0 && violations === 0;
    console.log(ok ? 'redis failovers: OK' : 'redis failovers: FAILED');
    return ok;
  } finally {
    stopLoad.abort();
    await Promise.all(replicas.map((r) => r.stop()));
    await sandbox.close();
    await provider.stop();
    await deployment.stop();
    for (const dir of dirs) dir.remove();
  }
}

async function redisFailover(): Promise<boolean> {
  let ok = true;
  for (const topology of TOPOLOGIES) {
    const deployment = topology === 'cluster' ? await clusterDeployment() : await sentinelDeployment();
    ok = (await failoversOn(deployment)) && ok;
  }
  return ok;
}

export default async function main(): Promise<void> {
  const ok = await redisFailover();
  if (!ok) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
