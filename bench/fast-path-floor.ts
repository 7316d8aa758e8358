// Whether a Fastify-native fast path (a hook that answers from the cache) could reach the service's figures:
// the bare node:http server, the floor of any hook design (bench/fastify-hook-server.ts) and the service's
// cache hit, in alternating rounds of one run. The service answers from its own listener before Fastify; if
// the hook's floor is below the service, no hook design can match it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, row } from './autocannon-run.js';
import { liveEnv, type Round, round, startProviderA, warmUp } from './cache-hit.js';
import { loadGenerator } from './load-generator.js';
import { type Child, startChild, startService } from './processes.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

export default async function fastPathFloorBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const children: Child[] = [];
  const load = loadGenerator();
  try {
    const providerA = await startProviderA();
    children.push(providerA);
    const service = await startService({ ...liveEnv(providerA, stateDir), LOG_LEVEL: 'warn' }, load.serverLaunch);
    children.push(service);
    const { body, headers } = await warmUp(service.url + PATH);
    const env = { BARE_BODY: body, BARE_HEADERS: JSON.stringify(headers) };
    const bare = await startChild('bench/bare-server.ts', env, /LISTENING (\d+)/, load.serverLaunch);
    children.push(bare);
    const hook = await startChild('bench/fastify-hook-server.ts', env, /LISTENING (\d+)/, load.serverLaunch);
    children.push(hook);
    const servers = { bare, hook, service };
    for (const server of Object.values(servers)) await load.measure(server.url + PATH, { duration: 2 });
    const rounds: Record<keyof typeof servers, Round[]> = { bare: [], hook: [], service: [] };
    for (let i = 0; i < ROUNDS; i += 1) {
      for (const [name, server] of Object.entries(servers) as [keyof typeof servers, Child][])
        rounds[name].push(await round(server, {}, load));
    }
    console.log(
      `\nfast path: a Fastify hook's floor against the service's listener, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s; ${load.description}`,
    );
    for (let i = 0; i < ROUNDS; i += 1) {
      console.log(row(`round ${i + 1} bare node:http`, rounds.bare[i]!));
      console.log(row(`round ${i + 1} Fastify onRequest answer`, rounds.hook[i]!));
      console.log(row(`round ${i + 1} service (LOG_LEVEL=warn)`, rounds.service[i]!));
    }
    const ratio = (name: 'hook' | 'service') => median(rounds[name].map((f, i) => f.requestsPerSecond / rounds.bare[i]!.requestsPerSecond));
    // The load generator shares the two cores: throughput saturates at its pace, CPU per request does not.
    const cpu = (name: keyof typeof servers) => median(rounds[name].map((r) => r.cpuMicros)).toFixed(1);
    console.log(
      `median ratio to bare node: a hook that answers at once ${ratio('hook').toFixed(2)} (the best any hook design can do), the service's listener ${ratio('service').toFixed(2)};` +
        ` CPU per request: bare ${cpu('bare')} µs, hook floor ${cpu('hook')} µs, service ${cpu('service')} µs`,
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await fastPathFloorBench();
