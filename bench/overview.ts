// Market overview latency: cold (every instrument fetched from the simulated Yahoo server, with 0 ms and
// with a realistic 80 ms upstream latency, concurrency as configured) and warm (cache hit, measured with
// autocannon against the service in its own process). Run alone with `npx tsx bench/overview.ts`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/core/config.js';
import { sandboxConfig, startSandbox } from '../src/sandbox/index.js';
import { measure, row } from './autocannon-run.js';
import { startChild } from './processes.js';

const PATH = '/api/market/overview';
const COLD_SAMPLES = Number(process.env.BENCH_COLD_SAMPLES ?? 30);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Sequential requests with the overview cache disabled, so each one rebuilds from the upstream. */
async function cold(upstreamLatencyMs: number, stateDir: string): Promise<string> {
  const sandbox = await startSandbox();
  // No Yahoo budget: at 60 calls a minute (the default) the third cold build is refused, and this measures latency.
  const base = loadConfig({
    DATA_MODE: 'sandbox',
    LOG_LEVEL: 'silent',
    STATE_DIR: stateDir,
    RATE_LIMIT_PER_MINUTE: '0',
    YAHOO_CALLS_PER_MINUTE: '0',
    CACHE_OVERVIEW_FRESH_SECONDS: '0',
    CACHE_OVERVIEW_STALE_SECONDS: '0',
  });
  const config = sandboxConfig(base, sandbox);
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  try {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    sandbox.yahoo.setFaults({ latencyMs: upstreamLatencyMs });
    const times: number[] = [];
    for (let i = 0; i < COLD_SAMPLES; i += 1) {
      const started = performance.now();
      const res = await request(url + PATH);
      await res.body.text();
      if (res.statusCode !== 200 || res.headers['x-cache'] !== 'MISS')
        throw new Error(`cold request answered ${res.statusCode} ${String(res.headers['x-cache'])}`);
      times.push(performance.now() - started);
    }
    const calls = sandbox.yahoo.count();
    times.sort((a, b) => a - b);
    const symbols = config.overview.symbols.length;
    return (
      `${`overview cold (upstream +${upstreamLatencyMs} ms)`.padEnd(34)} p50 ${percentile(times, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(times, 99).toFixed(1).padStart(6)} ms   ` +
      `${COLD_SAMPLES} samples, ${symbols} instruments, concurrency ${config.overview.concurrency}, ${calls / COLD_SAMPLES} upstream calls each`
    );
  } finally {
    await app.close();
    await sandbox.close();
  }
}

async function warm(stateDir: string): Promise<string> {
  const env = { STATE_DIR: stateDir, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', CACHE_OVERVIEW_FRESH_SECONDS: '3600' };
  const service = await startChild('bench/overview-service.ts', env, /LISTENING (\d+)/);
  try {
    const first = await request(service.url + PATH);
    await first.body.text();
    if (first.statusCode !== 200) throw new Error(`warm-up answered ${first.statusCode}`);
    return row('overview warm (cache hit)', await measure(service.url + PATH));
  } finally {
    await service.stop();
  }
}

export default async function overviewBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-overview-'));
  try {
    console.log(await cold(0, stateDir));
    console.log(await cold(80, stateDir));
    console.log(await warm(stateDir));
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await overviewBench();
