// Cache-hit throughput of GET /api/provider-a/quote against a bare node:http server sending the same
// bytes, both measured in this run on this machine, under each configuration people deploy (the defaults,
// TRUST_PROXY naming the proxy in front, a CORS_ORIGINS list, all of them with the broker and metrics
// access options), each at LOG_LEVEL info and warn. The load sends what a caller behind that configuration
// sends: X-Forwarded-For from the named proxy (the load generator's 127.0.0.1), the listed Origin.
// The load generator is wrk on a CPU of its own, each server pinned to the other (bench/load-generator.ts;
// autocannon where wrk is missing, and the report says which). The service runs as deployed: live mode, with
// provider A's simulator in a process of its own (sandbox mode would run every simulator in the service's
// process, their ticking markets included, and charge their timers to its hits). The machine's speed swings
// within seconds, so the two servers are measured in short alternating rounds (BENCH_ROUNDS of BENCH_SECONDS,
// default 10 of 2 s) and the median of the per-round ratios is reported, with each server's CPU time per
// request (from /proc), which moves far less than throughput does. BENCH_CONFIGURATIONS=default,cors
// (names as below) runs some alone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import { type Figures, median, row } from './autocannon-run.js';
import { type LoadGenerator, loadGenerator } from './load-generator.js';
import { type Child, type Launch, startChild, startService } from './processes.js';
import { onEachStore } from './redis-stores.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

export interface Round extends Figures {
  /** Server CPU time (user + system) per answered request, in µs; NaN where /proc is not available. */
  cpuMicros: number;
}

export interface Configuration {
  env: Record<string, string>;
  /** What each request of the load sends. */
  headers: Record<string, string>;
}

const DASHBOARD = 'https://dash.example.com';
const PROXIED = { env: { TRUST_PROXY: '127.0.0.1' }, headers: { 'x-forwarded-for': '203.0.113.9' } };
const LISTED = { env: { CORS_ORIGINS: DASHBOARD }, headers: { origin: DASHBOARD } };
export const CONFIGURATIONS: Readonly<Record<string, Configuration>> = {
  default: { env: {}, headers: {} },
  'TRUST_PROXY=127.0.0.1': PROXIED,
  'CORS_ORIGINS=list': LISTED,
  'all set': {
    env: {
      ...PROXIED.env,
      ...LISTED.env,
      BROKER_TOKEN: 'a-bench-broker-token-of-32-chars',
      BROKER_ALLOW_FROM: '10.0.0.0/8',
      METRICS_TOKEN: 'a-bench-metrics-token-of-32-char',
    },
    headers: { ...PROXIED.headers, ...LISTED.headers },
  },
};

/** The targets: throughput against the bare server, median of the rounds. */
export const LOG_LEVELS: readonly [string, number][] = [
  ['info', 0.85],
  ['warn', 0.9],
];

export async function cacheHitBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const chosen = process.env.BENCH_CONFIGURATIONS?.split(',');
  const load = loadGenerator();
  const summary: string[] = [];
  const providerA = await startProviderA();
  try {
    console.log(`\ncache hits: load generator ${load.description}`);
    await onEachStore(async (store) => {
      for (const [name, configuration] of Object.entries(CONFIGURATIONS)) {
        if (chosen !== undefined && !chosen.includes(name)) continue;
        const cells: string[] = [];
        for (const [level, target] of LOG_LEVELS) {
          const env = { ...liveEnv(providerA, stateDir), ...configuration.env, LOG_LEVEL: level, ...store.env };
          const { ratio, servedCpu, bareCpu } = await measureVariant(
            `${name}, LOG_LEVEL=${level}${store.name}`,
            env,
            configuration.headers,
            target,
            load,
          );
          cells.push(
            `${ratio.toFixed(2)} (${ratio >= target ? 'met' : 'NOT met'}), CPU ${servedCpu.toFixed(1)} / ${bareCpu.toFixed(1)} µs`,
          );
        }
        summary.push(`| ${`${name}${store.name}`.padEnd(40)} | ${cells.join(' | ')} |`);
      }
    });
    console.log(`\ncache hits against bare node:http, median of ${ROUNDS} rounds of ${ROUND_SECONDS} s (targets: info ≥ 0.85, warn ≥ 0.9)`);
    console.log(`load generator: ${load.description}; CPU: per request, the service's / the bare server's`);
    console.log(`| ${'configuration'.padEnd(40)} | info | warn |`);
    for (const line of summary) console.log(line);
  } finally {
    await providerA.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Provider A's simulator, in a process of its own: the service answers its first request from it, then from its cache. */
export function startProviderA(): Promise<Child> {
  return startChild('bench/provider-a-process.ts', {}, /LISTENING (\d+)/);
}

/** The service as deployed (live mode against the simulator), a fresh window outlasting the run, no per-caller limit. */
export function liveEnv(providerA: Child, stateDir: string): Record<string, string> {
  return {
    DATA_MODE: 'live',
    ALPHA_VANTAGE_URL: `${providerA.url}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    STATE_DIR: stateDir,
    RATE_LIMIT_PER_MINUTE: '0',
    CACHE_QUOTE_FRESH_SECONDS: '3600',
  };
}

/** The bare server replaying the service's warm answer (body and headers) for a request with `headers`. */
export async function startBare(
  service: Child,
  headers: Record<string, string>,
  launch: Launch = {},
): Promise<{ bare: Child; bytes: number }> {
  const warm = await warmUp(service.url + PATH, headers);
  const bare = await startChild(
    'bench/bare-server.ts',
    { BARE_BODY: warm.body, BARE_HEADERS: JSON.stringify(warm.headers) },
    /LISTENING (\d+)/,
    launch,
  );
  return { bare, bytes: Buffer.byteLength(warm.body) };
}

async function measureVariant(
  name: string,
  env: Record<string, string>,
  headers: Record<string, string>,
  target: number,
  load: LoadGenerator,
): Promise<{ ratio: number; servedCpu: number; bareCpu: number }> {
  const service = await startService(env, load.serverLaunch);
  let bare: Child | undefined;
  try {
    const started = await startBare(service, headers, load.serverLaunch);
    bare = started.bare;
    // JIT warm-up for both, not reported.
    await load.measure(bare.url + PATH, { duration: 2, headers });
    await load.measure(service.url + PATH, { duration: 2, headers });
    const pairs: [Round, Round][] = [];
    for (let i = 0; i < ROUNDS; i += 1) pairs.push([await round(bare, headers, load), await round(service, headers, load)]);
    return report(name, started.bytes, pairs, target);
  } finally {
    await bare?.stop();
    await service.stop();
  }
}

/** The first request fills the cache; its body and headers (for a request with `sent`) are what the bare server replays. */
export async function warmUp(url: string, sent: Record<string, string> = {}): Promise<{ body: string; headers: Record<string, string> }> {
  const warm = await request(url, { headers: sent });
  const body = await warm.body.text();
  if (warm.statusCode !== 200) throw new Error(`warm-up failed: ${warm.statusCode} ${body}`);
  const skipped = new Set(['content-length', 'content-type', 'date', 'connection', 'keep-alive']);
  const headers = Object.fromEntries(
    Object.entries(warm.headers)
      .filter(([k]) => !skipped.has(k))
      .map(([k, v]) => [k, String(v)]),
  );
  return { body, headers };
}

export async function round(server: Child, headers: Record<string, string>, load: LoadGenerator): Promise<Round> {
  const before = cpuMicros(server);
  const figures = await load.measure(server.url + PATH, { duration: ROUND_SECONDS, headers });
  const answered = figures.requests ?? figures.requestsPerSecond * ROUND_SECONDS;
  return { ...figures, cpuMicros: (cpuMicros(server) - before) / answered };
}

/** utime + stime of the process, in µs (clock ticks are 1/100 s on Linux). */
export function cpuMicros(server: Child): number {
  try {
    const fields = readFileSync(`/proc/${server.process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

function report(
  name: string,
  bytes: number,
  pairs: [Round, Round][],
  target: number,
): { ratio: number; servedCpu: number; bareCpu: number } {
  console.log(`\ncache hit, ${name}: ${bytes}-byte body, ${pairs.length} alternating rounds of ${ROUND_SECONDS} s`);
  pairs.forEach(([bare, served], i) => {
    console.log(row(`round ${i + 1} bare node:http`, bare));
    console.log(row(`round ${i + 1} ${name}`, served));
  });
  const ratios = pairs.map(([bare, served]) => served.requestsPerSecond / bare.requestsPerSecond);
  const bareCpu = median(pairs.map(([bare]) => bare.cpuMicros));
  const servedCpu = median(pairs.map(([, served]) => served.cpuMicros));
  const ratio = median(ratios);
  console.log(
    `median ratio throughput ${ratio.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}), target ≥ ${target}: ${ratio >= target ? 'met' : 'NOT met'}` +
      `   p99 ${median(pairs.map(([, s]) => s.p99Ms))} ms vs ${median(pairs.map(([b]) => b.p99Ms))} ms` +
      `   CPU per request ${servedCpu.toFixed(1)} µs vs ${bareCpu.toFixed(1)} µs (ratio ${(bareCpu / servedCpu).toFixed(2)})`,
  );
  return { ratio, servedCpu, bareCpu };
}

if (import.meta.url === `file://${process.argv[1]}`) await cacheHitBench();
