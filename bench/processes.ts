// Child processes for benchmarks: the server under test never shares an event loop with the load generator.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { SANDBOX_CREDENTIALS, type Sandbox } from '../src/sandbox/index.js';

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * How a server process is started: `prefix` runs before node (`taskset -c 1`, or valgrind), `nodeOptions`
 * go to node, and readiness is awaited for `readyMs` (a server under valgrind starts in minutes).
 */
export interface Launch {
  prefix?: readonly string[];
  nodeOptions?: readonly string[];
  readyMs?: number;
}

/** `node <nodeOptions> <args>`, behind the launch's prefix. */
function launched(launch: Launch, args: readonly string[]): [string, string[]] {
  const [command = process.execPath, ...rest] = [...(launch.prefix ?? []), process.execPath];
  return [command, [...rest, ...(launch.nodeOptions ?? []), ...args]];
}

/** Starts `node --import tsx <script>` and resolves once it prints its port. */
export async function startChild(script: string, env: Record<string, string>, portPattern: RegExp, launch: Launch = {}): Promise<Child> {
  const [command, args] = launched(launch, ['--import', 'tsx', script]);
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const match = portPattern.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * What `npm start` runs: the compiled entry point, so benchmarks measure the build that ships rather
 * than tsx's on-the-fly transpilation. `npm run bench` and `npm run test:hardening` build it first.
 */
export const SERVICE_ENTRY = 'dist/server.js';

/** Fails early, with the fix, when the build is missing. */
export function serviceEntry(): string {
  // An A/B benchmark points the same benchmarks at another build (bench/next-tick-ab.ts).
  const entry = process.env.BENCH_SERVICE_ENTRY ?? SERVICE_ENTRY;
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  return entry;
}

/**
 * The real entry point (sandbox mode unless env says otherwise) on a free port, ready once its liveness
 * probe answers; works at any LOG_LEVEL because it never reads the log.
 */
export async function startService(env: Record<string, string>, launch: Launch = {}): Promise<Child> {
  const port = await freePort();
  const [command, args] = launched(launch, [serviceEntry()]);
  const child = spawn(command, args, {
    env: { ...process.env, DATA_MODE: 'sandbox', METRICS_PORT: '0', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode} before it was ready`);
    try {
      const res = await request(`${url}/api/system/live`);
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (attempt * 100 > (launch.readyMs ?? 30_000))
      throw new Error(`service did not become ready in ${(launch.readyMs ?? 30_000) / 1000} s`);
    await sleep(100);
  }
  return {
    url,
    process: child,
    stop: async () => {
      // Killed by a signal (a bench's SIGKILL), it has exited without an exit code.
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Live mode pointed at standalone simulators: the bench can flip their faults and count their calls. */
export function liveAgainstSandbox(sandbox: Sandbox, stateDir: string): Record<string, string> {
  return {
    DATA_MODE: 'live',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    STATE_DIR: stateDir,
    ALPHA_VANTAGE_URL: `${sandbox.alphaVantage.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    MASSIVE_URL: sandbox.massive.origin,
    MASSIVE_API_KEY: SANDBOX_CREDENTIALS.massiveKey,
    YAHOO_URL: sandbox.yahoo.origin,
    BROKER: 'ibkr',
    IBKR_GATEWAY_URL: sandbox.ibkr.baseUrl,
    IBKR_TLS_VERIFY: 'false',
  };
}
