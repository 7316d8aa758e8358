// `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run.
import { cacheHitBench } from './cache-hit.js';

console.log(
  `node ${process.version}, ${new Date().toISOString()}, BENCH_SECONDS=${process.env.BENCH_SECONDS ?? '(each benchmark’s default)'}`,
);
await cacheHitBench();

// Each of the others exports its run as its default.
for (const file of [
  'quota-economy.ts',
  'attack.ts',
  'dashboard.ts',
  'overview.ts',
  'nginx-cache.ts',
  'fast-path-floor.ts',
  'demand-flood.ts',
  'stream.ts',
  'fan-out-floor.ts',
  'broker-stream.ts',
  'ibkr-pacing.ts',
  'redis-failover.ts',
  'mcp.ts',
]) {
  const module = (await import(`./${file.replace(/\.ts$/, '.js')}`)) as { default: () => Promise<void> };
  await module.default();
}
