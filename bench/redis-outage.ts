// Redis killed and restarted under load (`npx tsx bench/redis-outage.ts`): three replicas of the real
// entry point share the local Redis (127.0.0.1:6379) through a loopback TCP proxy that is cut and
// restored, under a random REDIS_KEY_PREFIX. Every upstream is a standalone simulator in this process;
// the shared Alpha Vantage simulator enforces the same plan as the configured budget (5/min, 500/day,
// 1/s), and every call it receives is timestamped: the budget is checked where it matters.
// Reports 5xx (must be 0), the documented 429 and STALE answers per phase, upstream calls against the
// budget, and the time the replicas take to use Redis again. Exit code 1 on any 5xx, connection error,
// broken budget, or a replica that does not recover by itself.
//   REDIS_WARM_SECONDS=50  REDIS_OUTAGE_SECONDS=30  REDIS_AFTER_SECONDS=40  REDIS_RATE=60 (req/s per replica)
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { deleteKeys } from '../test/store/redis-helper.js';
import { TcpProxy } from '../test/store/tcp-proxy.js';
import { type MixedRequest, steadyMixedLoad, tempStateDir } from './load.js';
import { type Child, liveAgainstSandbox, startService } from './processes.js';

const WARM = Number(process.env.REDIS_WARM_SECONDS ?? 50);
const OUTAGE = Number(process.env.REDIS_OUTAGE_SECONDS ?? 30);
const AFTER = Number(process.env.REDIS_AFTER_SECONDS ?? 40);
const RATE = Number(process.env.REDIS_RATE ?? 60);
const PLAN = { callsPerMinute: 5, callsPerDay: 500, burstPerSecond: 1 };

type Phase = 'before' | 'outage' | 'after';

interface PhaseCounts {
  byStatus: Record<string, number>;
  stale: number;
  codes: Record<string, number>;
  errors: number;
}

function emptyCounts(): PhaseCounts {
  return { byStatus: {}, stale: 0, codes: {}, errors: 0 };
}

function replicaEnv(sandbox: Sandbox, redisUrl: string, prefix: string, stateDir: string): Record<string, string> {
  return {
    ...liveAgainstSandbox(sandbox, stateDir),
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    ALPHA_VANTAGE_CALLS_PER_MINUTE: String(PLAN.callsPerMinute),
    ALPHA_VANTAGE_CALLS_PER_DAY: String(PLAN.callsPerDay),
  };
}

interface StoreState {
  redisReachable: boolean;
  fallback: boolean;
  budgetStore: string | undefined;
}

async function storeState(replica: Child): Promise<StoreState> {
  const res = await request(`${replica.url}/api/system/status`);
  const body = (await res.body.json()) as {
    store: { redisReachable?: boolean; fallback?: boolean };
    upstreams: { id: string; budget: { store: string } | null }[];
  };
  return {
    redisReachable: body.store.redisReachable === true,
    fallback: body.store.fallback === true,
    budgetStore: body.upstreams.find((u) => u.id === 'provider-a')?.budget?.store,
  };
}

/** Milliseconds until `check` holds on every replica (polled every 100 ms), or -1 after `limitMs`. */
async function timeUntil(replicas: Child[], check: (s: StoreState) => boolean, limitMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    const states = await Promise.all(replicas.map((r) => storeState(r).catch(() => undefined)));
    if (states.every((s) => s !== undefined && check(s))) return Date.now() - started;
    await sleep(100);
  }
  return -1;
}

/** The largest number of calls inside any window of `windowMs` (the provider's sliding count). */
function maxInWindow(calls: number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < calls.length; end += 1) {
    while ((calls[end] as number) - (calls[start] as number) >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

export async function redisOutage(): Promise<boolean> {
  const sandbox = await startSandbox({ alphaVantage: PLAN });
  const calls: number[] = [];
  sandbox.alphaVantage.on('request', (event: { path: string }) => {
    if (event.path === '/query') calls.push(Date.now());
  });
  const proxy = new TcpProxy(6379);
  await proxy.open();
  const prefix = `mdp-bench:${randomBytes(6).toString('hex')}:`;
  const dirs = [0, 1, 2].map(() => tempStateDir('redis-outage'));
  const replicas: Child[] = [];
  try {
    for (const dir of dirs) replicas.push(await startService(replicaEnv(sandbox, proxy.url, prefix, dir.dir)));
    const initial = await Promise.all(replicas.map(storeState));
    if (!initial.every((s) => s.redisReachable)) throw new Error(`replicas do not reach Redis at start: ${JSON.stringify(initial)}`);

    const started = Date.now();
    let phase: Phase = 'before';
    const counts: Record<Phase, PhaseCounts> = { before: emptyCounts(), outage: emptyCounts(), after: emptyCounts() };
    const byKind: Record<string, Record<string, number>> = {};
    const observe = (kind: MixedRequest['kind'], status: number, headers: Record<string, unknown>, body: string) => {
      const c = counts[phase];
      c.byStatus[status] = (c.byStatus[status] ?? 0) + 1;
      if (headers['x-cache'] === 'STALE') c.stale += 1;
      if (status >= 429 && kind !== 'error-4xx') {
        const code = /"code":"([A-Z_]+)"/.exec(body)?.[1] ?? 'none';
        c.codes[`${status} ${code}`] = (c.codes[`${status} ${code}`] ?? 0) + 1;
      }
      byKind[kind] ??= {};
      const k = byKind[kind];
      k[status] = (k[status] ?? 0) + 1;
    };
    const runs = steadyMixedLoad(
      replicas.map((r) => r.url),
      RATE,
      WARM + OUTAGE + AFTER,
      observe,
      () => {
        counts[phase].errors += 1;
      },
    );

    console.log(
      `\nRedis outage under load: 3 replicas x ${RATE} req/s (mixed), RATE_LIMIT_PER_MINUTE=0, provider-A plan and budget ${PLAN.callsPerMinute}/min ${PLAN.callsPerDay}/day 1/s; Redis cut at ${WARM} s for ${OUTAGE} s`,
    );
    await sleep(WARM * 1000);
    phase = 'outage';
    const cutAt = Date.now();
    await proxy.cut();
    const fallbackMs = await timeUntil(replicas, (s) => s.fallback && !s.redisReachable, OUTAGE * 1000);
    const duringOutage = await Promise.all(replicas.map(storeState));
    await sleep(Math.max(0, cutAt + OUTAGE * 1000 - Date.now()));
    phase = 'after';
    await proxy.open();
    const recoveryMs = await timeUntil(
      replicas,
      (s) => s.redisReachable && !s.fallback && s.budgetStore !== 'local-fallback',
      AFTER * 1000,
    );
    const results = await runs;
    const total = results.reduce((n, r) => n + r.requests.total, 0);

    console.log(
      `requests: ${total}; fallback noticed by all replicas ${fallbackMs} ms after the cut; budget store during the outage: ${duringOutage.map((s) => s.budgetStore).join(', ')}`,
    );
    for (const p of ['before', 'outage', 'after'] as const) {
      const c = counts[p];
      const fives = Object.entries(c.byStatus)
        .filter(([s]) => Number(s) >= 500)
        .reduce((n, [, v]) => n + v, 0);
      console.log(
        `  ${p.padEnd(7)} by status ${JSON.stringify(c.byStatus)}; STALE ${c.stale}; 429/5xx codes ${JSON.stringify(c.codes)}; 5xx ${fives}; connection errors/timeouts ${c.errors}`,
      );
    }
    console.log(`  by request kind: ${JSON.stringify(byKind)}`);
    const minuteWindows = new Map<number, number>();
    for (const at of calls) {
      const minute = Math.floor((at - started) / 60_000);
      minuteWindows.set(minute, (minuteWindows.get(minute) ?? 0) + 1);
    }
    const gaps = calls.slice(1).map((at, i) => at - (calls[i] as number));
    const maxMinute = maxInWindow(calls, 60_000);
    const maxSecond = maxInWindow(calls, 1_000);
    console.log(
      `upstream (Alpha Vantage simulator) calls: ${calls.length} at ${calls.map((at) => `${((at - started) / 1000).toFixed(1)}s`).join(' ')}; ` +
        `per minute from the start ${JSON.stringify(Object.fromEntries(minuteWindows))}; max in any sliding 60 s ${maxMinute} (budget ${PLAN.callsPerMinute}); ` +
        `max in any 1 s ${maxSecond}; smallest gap ${gaps.length === 0 ? '-' : Math.min(...gaps)} ms`,
    );
    console.log(`recovery: every replica back on Redis ${recoveryMs} ms after the restore (no restart)`);

    const problems: string[] = [];
    const fivexx = (['before', 'outage', 'after'] as const)
      .flatMap((p) => Object.entries(counts[p].byStatus))
      .filter(([s]) => Number(s) >= 500);
    if (fivexx.length > 0) problems.push(`5xx answers: ${JSON.stringify(fivexx)}`);
    const errors = counts.before.errors + counts.outage.errors + counts.after.errors;
    if (errors > 0) problems.push(`${errors} connection errors or timeouts`);
    if (maxMinute > PLAN.callsPerMinute) problems.push(`the upstream saw ${maxMinute} calls in 60 s (budget ${PLAN.callsPerMinute})`);
    if (maxSecond > PLAN.burstPerSecond) problems.push(`the upstream saw ${maxSecond} calls in 1 s`);
    if (fallbackMs < 0) problems.push('the replicas never reported the local fallback');
    if (recoveryMs < 0) problems.push(`the replicas did not return to Redis within ${AFTER} s`);
    for (const p of problems) console.log(`PROBLEM: ${p}`);
    console.log(problems.length === 0 ? 'redis outage: OK' : 'redis outage: FAILED');
    return problems.length === 0;
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await proxy.cut();
    await sandbox.close();
    await deleteKeys(prefix);
    for (const dir of dirs) dir.remove();
  }
}

const ok = await redisOutage();
process.exitCode = ok ? 0 : 1;
