// How much of a cache hit's cost above a bare server is the service's process rather than its code: the bare
// server of bench/bare-server.ts started inside a running service (the built entry point, in the same process,
// after its pipeline has answered requests), against the same bare server alone and the service's own hits,
// in alternating rounds under wrk as bench/cache-hit.ts runs them (defaults; LOG_LEVEL as given, warn by default,
// so that the request log is not what differs). A bare server inside the service pays what the process costs
// every request (a larger heap to collect, Node's HTTP code shared with Fastify and the hot path, the service's
// timers); what the service pays beyond that is its own work on the hit.
// BENCH_PIPELINE_REQUESTS (default 50): how many quote requests the service in that process answers first.
//   npm run build && npx tsx bench/bare-in-service.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './autocannon-run.js';
import { liveEnv, type Round, round, startBare, startProviderA, warmUp } from './cache-hit.js';
import { loadGenerator } from './load-generator.js';
import { type Child, freePort, startChild, startService } from './processes.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
/** Quote requests the service in the shared process answers before the rounds (0: only the readiness probes). */
const PIPELINE_REQUESTS = Number(process.env.BENCH_PIPELINE_REQUESTS ?? 50);

async function bench(): Promise<void> {
  const load = loadGenerator();
  const providerA = await startProviderA();
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const env = { ...liveEnv(providerA, stateDir), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
  const servers: Child[] = [];
  try {
    const service = await startService(env, load.serverLaunch);
    servers.push(service);
    const { bare } = await startBare(service, {}, load.serverLaunch);
    servers.push(bare);
    const warm = await warmUp(service.url + PATH);
    const port = await freePort();
    const inside = await startChild(
      'bench/bare-in-service-child.ts',
      { ...env, PORT: String(port), METRICS_PORT: '0', BARE_BODY: warm.body, BARE_HEADERS: JSON.stringify(warm.headers) },
      /^LISTENING (\d+)$/,
      load.serverLaunch,
    );
    servers.push(inside);
    // The bare server listens before the service has finished starting.
    for (let tries = 0; ; tries += 1) {
      const ready = await warmUp(`http://127.0.0.1:${port}/api/system/live`).then(
        () => true,
        () => false,
      );
      if (ready) break;
      if (tries === 300) throw new Error('the service with a bare server inside did not start');
      await sleep(100);
    }
    // The service in that process answers through its pipeline first (a miss, then the hits it remembers).
    for (let i = 0; i < PIPELINE_REQUESTS; i += 1) await warmUp(`http://127.0.0.1:${port}${PATH}`);
    const measured: [string, Child][] = [
      ['bare server alone', bare],
      ["bare server inside the service's process", inside],
      ['the service', service],
    ];
    for (const [, server] of measured) await load.measure(server.url + PATH, { duration: 3 });
    const rounds: Round[][] = measured.map(() => []);
    for (let i = 0; i < ROUNDS; i += 1) for (const [k, [, server]] of measured.entries()) rounds[k]!.push(await round(server, {}, load));
    console.log(
      `\nbare server inside the service's process (defaults, LOG_LEVEL=${env.LOG_LEVEL}, after ${PIPELINE_REQUESTS} quote requests to the service): ${load.description}; median of ${ROUNDS} alternating rounds`,
    );
    for (const [k, [name]] of measured.entries()) {
      const ratio = median(rounds[k]!.map((r, i) => r.requestsPerSecond / rounds[0]![i]!.requestsPerSecond));
      console.log(
        `${name.padEnd(42)} ${ratio.toFixed(2)}× the bare server alone, CPU ${median(rounds[k]!.map((r) => r.cpuMicros)).toFixed(1)} µs a request (the whole process's)`,
      );
    }
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await providerA.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await bench();
