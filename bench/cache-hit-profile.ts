// Where a cache hit's time goes under wrk, function by function, in µs a request: the service and the bare
// server each run under V8's sampling profiler (--cpu-prof, a sample every 200 µs) while wrk loads them as
// bench/cache-hit.ts does, and each function's self time over the measured run is divided by the requests
// answered. Callgrind (bench/cache-hit-instructions.ts) counts one connection's instructions; this sees what
// 64 connections cost, the kernel's time in the system calls' own frames (a socket write is
// `writeUtf8String`) and the collector's. The profiler adds its own cost to both: read the rows against each
// other, not as absolute figures.
// BENCH_CONFIGURATIONS picks a configuration of bench/cache-hit.ts (default: `default`), LOG_LEVEL its level
// (default info), BENCH_SECONDS the measured run (default 8), BENCH_PROFILE_ROWS the rows printed (default 40).
//   npm run build && npx tsx bench/cache-hit-profile.ts
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIGURATIONS, liveEnv, startBare, startProviderA } from './cache-hit.js';
import { type LoadGenerator, loadGenerator } from './load-generator.js';
import { type Child, startService } from './processes.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const NAME = process.env.BENCH_CONFIGURATIONS ?? 'default';
const LEVEL = process.env.LOG_LEVEL ?? 'info';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROWS = Number(process.env.BENCH_PROFILE_ROWS ?? 40);
const INTERVAL_MICROS = 200;

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time by function over the last `seconds` of busy samples (the measured run, which ends just before the stop). */
function selfTimes(profile: CpuProfile, seconds: number): Map<string, number> {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  let end = times.length - 1;
  while (end > 0 && frames.get(profile.samples[end]!)?.functionName === '(idle)') end -= 1;
  const from = times[end]! - seconds * 1e6;
  const self = new Map<string, number>();
  for (let i = end; i >= 0 && times[i]! >= from; i -= 1) {
    const frame = frames.get(profile.samples[i]!)!;
    const file = frame.url.split('/').slice(-2).join('/');
    const key = `${frame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${frame.lineNumber + 1}`}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  return self;
}

async function profiled(
  load: LoadGenerator,
  name: string,
  start: (dir: string) => Promise<Child>,
  headers: Record<string, string>,
): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), `mdp-profile-${name}-`));
  const server = await start(dir);
  let requests = 0;
  try {
    await load.measure(server.url + PATH, { duration: 3, headers });
    const figures = await load.measure(server.url + PATH, { duration: SECONDS, headers });
    requests = figures.requests ?? figures.requestsPerSecond * SECONDS;
    console.log(`${name}: ${figures.requestsPerSecond} requests a second under the profiler`);
  } finally {
    await server.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`${name} wrote no profile`);
  const self = selfTimes(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, SECONDS);
  rmSync(dir, { recursive: true, force: true });
  return new Map([...self].map(([key, micros]) => [key, micros / requests]));
}

async function main(): Promise<void> {
  const configuration = CONFIGURATIONS[NAME];
  if (configuration === undefined) throw new Error(`BENCH_CONFIGURATIONS: one of ${Object.keys(CONFIGURATIONS).join(', ')}`);
  const load = loadGenerator();
  const providerA = await startProviderA();
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const options = (dir: string) => ({
    ...load.serverLaunch,
    nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${INTERVAL_MICROS}`],
  });
  const env = { ...liveEnv(providerA, stateDir), ...configuration.env, LOG_LEVEL: LEVEL };
  console.log(`cache hit profile, ${NAME}, LOG_LEVEL=${LEVEL}: ${load.description}; ${SECONDS} s measured after 3 s of warm-up`);
  try {
    const service = await profiled(load, 'service', (dir) => startService(env, options(dir)), configuration.headers);
    // The bare server replays the answer of a service that is not profiled.
    const reference = await startService(env);
    const bare = await profiled(
      load,
      'bare',
      async (dir) => (await startBare(reference, configuration.headers, options(dir))).bare,
      configuration.headers,
    ).finally(() => reference.stop());
    const total = (times: Map<string, number>) => [...times].filter(([k]) => !k.startsWith('(idle)')).reduce((sum, [, v]) => sum + v, 0);
    console.log(`busy µs a request (idle left out): service ${total(service).toFixed(1)}, bare ${total(bare).toFixed(1)}`);
    console.log('   service |     bare | function (self time, µs a request)');
    const keys = [...new Set([...service.keys(), ...bare.keys()])].filter((k) => !k.startsWith('(idle)'));
    keys.sort((a, b) => (service.get(b) ?? 0) - (service.get(a) ?? 0));
    for (const key of keys.slice(0, ROWS)) {
      const cell = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(3)).padStart(9);
      console.log(`${cell(service.get(key))} | ${cell(bare.get(key))} | ${key}`);
    }
  } finally {
    await providerA.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
