// The nextTick shape pin (src/process/next-tick-shape.ts) weighed as a whole: the same build with and
// without it, in alternating rounds, on cache hits (the case it was made for), cold requests (every one a
// provider call: promise-heavy, where the async hook it enables once costs), the same in Redis mode, and
// the stream fan-out. The build without it is dist/ with the one import line removed from server.js.
//   npm run build && npx tsx bench/next-tick-ab.ts
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measure } from './autocannon-run.js';
import { cacheHitBench } from './cache-hit.js';
import { startService } from './processes.js';

const WITH = 'dist/server.js';
const WITHOUT = 'dist-without-pin/server.js';
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_AB_SECONDS ?? 5);

function buildWithoutPin(): void {
  rmSync('dist-without-pin', { recursive: true, force: true });
  cpSync('dist', 'dist-without-pin', { recursive: true });
  const server = readFileSync(WITHOUT, 'utf8');
  const stripped = server.replace(/^import '\.\/process\/next-tick-shape\.js';\n/m, '');
  if (stripped === server) throw new Error('the pin import was not found in dist/server.js');
  writeFileSync(WITHOUT, stripped);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Requests a second on a path whose every answer is a miss (fresh and stale windows 0, no budget). */
async function coldRounds(name: string, extra: Record<string, string>): Promise<void> {
  const env = {
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    QUOTE_FALLBACK: 'none',
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '0',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    CACHE_QUOTE_FRESH_SECONDS: '0',
    CACHE_QUOTE_STALE_SECONDS: '0',
    ...extra,
  };
  const results: Record<string, number[]> = { with: [], without: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [variant, entry] of [
      ['with', WITH],
      ['without', WITHOUT],
    ] as const) {
      process.env.BENCH_SERVICE_ENTRY = entry;
      const stateDir = mkdtempSync(join(tmpdir(), 'mdp-ab-'));
      const service = await startService({ ...env, STATE_DIR: stateDir, REDIS_KEY_PREFIX: `mdp-ab-${process.pid}-${round}-${variant}:` });
      try {
        await measure(`${service.url}/api/provider-a/quote?symbol=IBM`, { connections: 10, duration: 2 });
        const figures = await measure(`${service.url}/api/provider-a/quote?symbol=IBM`, { connections: 10, duration: SECONDS });
        results[variant]?.push(figures.requestsPerSecond);
      } finally {
        await service.stop();
        rmSync(stateDir, { recursive: true, force: true });
      }
    }
  }
  const a = median(results.with ?? []);
  const b = median(results.without ?? []);
  console.log(
    `${name.padEnd(34)} with pin ${String(a).padStart(6)} req/s   without ${String(b).padStart(6)} req/s   with/without ${(a / b).toFixed(3)}   rounds ${JSON.stringify(results)}`,
  );
}

function streamLevel(entry: string): string {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/stream.ts'], {
    env: { ...process.env, BENCH_SERVICE_ENTRY: entry, BENCH_STREAM_LEVELS: '5000', BENCH_SECONDS: '10' },
    encoding: 'utf8',
  });
  return run.stdout ?? '';
}

buildWithoutPin();
try {
  console.log(`node ${process.version}; ${ROUNDS} alternating rounds of ${SECONDS} s per variant`);
  for (const [variant, entry] of [
    ['WITH the pin', WITH],
    ['WITHOUT the pin', WITHOUT],
  ] as const) {
    process.env.BENCH_SERVICE_ENTRY = entry;
    console.log(`\n== cache hits, ${variant}`);
    await cacheHitBench();
  }
  console.log('\n== cold requests (every answer a provider call)');
  await coldRounds('cold, embedded store', {});
  await coldRounds('cold, Redis mode', { REDIS_URL: 'redis://127.0.0.1:6379' });
  console.log('\n== stream fan-out, 5,000 viewers');
  for (const [variant, entry] of [
    ['with the pin', WITH],
    ['without the pin', WITHOUT],
    ['with the pin', WITH],
    ['without the pin', WITHOUT],
  ] as const) {
    console.log(`-- ${variant}\n${streamLevel(entry)}`);
  }
} finally {
  rmSync('dist-without-pin', { recursive: true, force: true });
}
