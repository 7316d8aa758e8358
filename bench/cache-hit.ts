// Cache-hit throughput of GET /api/provider-a/quote against a bare node:http server sending the same
// bytes, both measured in this run on this machine. On a 2-core machine the load generator shares the
// CPU with the server under test, and the machine's speed swings by ±30 % within seconds, so the two
// servers are measured in short alternating rounds (BENCH_ROUNDS of BENCH_SECONDS, default 10 of 2 s)
// and the median of the per-round ratios is reported, with each server's CPU time per request (from
// /proc), which moves far less than throughput does.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { type Figures, measure, median, row } from './autocannon-run.js';
import { type Child, startChild, startService } from './processes.js';
import { onEachStore } from './redis-stores.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

export interface Round extends Figures {
  /** Server CPU time (user + system) per answered request, in µs; NaN where /proc is not available. */
  cpuMicros: number;
}

export async function cacheHitBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  // The targets: throughput against the bare server, median of the rounds.
  const variants: [string, Record<string, string>, number][] = [
    ['service (LOG_LEVEL=warn)', { LOG_LEVEL: 'warn' }, 0.9],
    ['service (default: info logs)', { LOG_LEVEL: 'info' }, 0.85],
  ];
  try {
    await onEachStore(async (store) => {
      for (const [variant, env, target] of variants)
        await measureVariant(`${variant}${store.name}`, { ...env, ...store.env }, target, stateDir);
    });
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function measureVariant(name: string, env: Record<string, string>, target: number, stateDir: string): Promise<void> {
  const service = await startService({ STATE_DIR: stateDir, RATE_LIMIT_PER_MINUTE: '0', CACHE_QUOTE_FRESH_SECONDS: '3600', ...env });
  let bare: Child | undefined;
  try {
    const { body, headers } = await warmUp(service.url + PATH);
    bare = await startChild('bench/bare-server.ts', { BARE_BODY: body, BARE_HEADERS: JSON.stringify(headers) }, /LISTENING (\d+)/);
    // JIT warm-up for both, not reported.
    await measure(bare.url + PATH, { duration: 2 });
    await measure(service.url + PATH, { duration: 2 });
    const pairs: [Round, Round][] = [];
    for (let i = 0; i < ROUNDS; i += 1) pairs.push([await round(bare), await round(service)]);
    report(name, Buffer.byteLength(body), pairs, target);
  } finally {
    await bare?.stop();
    await service.stop();
  }
}

/** The first request fills the cache; its body and headers are what the bare server replays. */
export async function warmUp(url: string): Promise<{ body: string; headers: Record<string, string> }> {
  const warm = await request(url);
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

export async function round(server: Child): Promise<Round> {
  const before = cpuMicros(server);
  const figures = await measure(server.url + PATH, { duration: ROUND_SECONDS });
  const answered = figures.requestsPerSecond * ROUND_SECONDS;
  return { ...figures, cpuMicros: (cpuMicros(server) - before) / answered };
}

/** utime + stime of the process, in µs (clock ticks are 1/100 s on Linux). */
function cpuMicros(server: Child): number {
  try {
    const fields = readFileSync(`/proc/${server.process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

function report(name: string, bytes: number, pairs: [Round, Round][], target: number): void {
  console.log(`\ncache hit, ${name}: ${bytes}-byte body, 50 connections, ${pairs.length} alternating rounds of ${ROUND_SECONDS} s`);
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
}

if (import.meta.url === `file://${process.argv[1]}`) await cacheHitBench();
