// Cache-hit throughput of GET /api/provider-a/quote against a bare node:http server sending the same
// bytes, both measured in this run on this machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { measure, row } from './autocannon-run.js';
import { startChild, startService } from './processes.js';

const PATH = '/api/provider-a/quote?symbol=IBM';

export async function cacheHitBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const variants: [string, Record<string, string>][] = [
    ['service (LOG_LEVEL=warn)', { LOG_LEVEL: 'warn' }],
    ['service (default: info logs)', { LOG_LEVEL: 'info' }],
  ];
  try {
    for (const [name, env] of variants) {
      const service = await startService({ STATE_DIR: stateDir, RATE_LIMIT_PER_MINUTE: '0', CACHE_QUOTE_FRESH_SECONDS: '3600', ...env });
      let bare: Awaited<ReturnType<typeof startChild>> | undefined;
      try {
        const warm = await request(service.url + PATH);
        const body = await warm.body.text();
        if (warm.statusCode !== 200) throw new Error(`warm-up failed: ${warm.statusCode} ${body}`);
        const headers = Object.fromEntries(
          Object.entries(warm.headers).filter(([k]) => !['content-length', 'content-type', 'date', 'connection', 'keep-alive'].includes(k)).map(([k, v]) => [k, String(v)]),
        );
        bare = await startChild('bench/bare-server.ts', { BARE_BODY: body, BARE_HEADERS: JSON.stringify(headers) }, /LISTENING (\d+)/);
        const baseline = await measure(bare.url + PATH);
        const served = await measure(service.url + PATH);
        console.log(`\ncache hit, ${name}: ${Buffer.byteLength(body)}-byte body, 50 connections`);
        console.log(row('bare node:http (same bytes)', baseline));
        console.log(row(name, served));
        console.log(`ratio throughput ${(served.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)}   p99 ${served.p99Ms} ms vs ${baseline.p99Ms} ms`);
      } finally {
        await bare?.stop();
        await service.stop();
      }
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await cacheHitBench();
