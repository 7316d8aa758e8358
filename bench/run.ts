// `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run.
import { existsSync } from 'node:fs';
import { cacheHitBench } from './cache-hit.js';

console.log(
  `node ${process.version}, ${new Date().toISOString()}, BENCH_SECONDS=${process.env.BENCH_SECONDS ?? '(each benchmark’s default)'}`,
);
await cacheHitBench();

// Benchmarks owned by other areas export a default async function; run the ones present.
for (const file of [
  'quota-economy.ts',
  'dashboard.ts',
  'overview.ts',
  'nginx-cache.ts',
  'fast-path-floor.ts',
  'stream.ts',
  'broker-stream.ts',
  'ibkr-pacing.ts',
  'redis-failover.ts',
]) {
  if (!existsSync(new URL(file, import.meta.url))) continue;
  const module = (await import(`./${file.replace(/\.ts$/, '.js')}`)) as { default?: () => Promise<void> };
  if (typeof module.default === 'function') await module.default();
}
