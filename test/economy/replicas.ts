// Spawns service replicas (test/economy/service-process.ts) and one shared Alpha Vantage simulator that
// records when every call arrived, so budgets are checked where they matter: at the upstream.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { request } from 'undici';
import { createAlphaVantageSimulator } from '../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import type { SimRequestEvent, SimulatedUpstream } from '../../src/sandbox/simulated-upstream.js';

export interface Replica {
  url: string;
  child: ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startReplica(t: TestContext, env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/economy/service-process.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  t.after(() => kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
  });
  return { url: `http://127.0.0.1:${port}`, child, kill };
}

export interface CountingUpstream {
  sim: SimulatedUpstream;
  url: string;
  /** Arrival times of every /query call. */
  calls: number[];
}

/** The simulator with its own limits off: the service alone must keep the budget, and we count. */
export async function startCountingUpstream(t: TestContext): Promise<CountingUpstream> {
  const sim = createAlphaVantageSimulator({
    validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey],
    callsPerMinute: 0,
    callsPerDay: 0,
    burstPerSecond: 0,
  });
  await sim.listen();
  t.after(() => sim.close());
  const calls: number[] = [];
  sim.on('arrival', (event: SimRequestEvent) => {
    if (event.path === '/query') calls.push(Date.now());
  });
  return { sim, url: `${sim.origin}/query`, calls };
}

export function upstreamEnv(upstream: CountingUpstream): Record<string, string> {
  // Provider A's budget alone: with the default Yahoo fallback, live mode would also try Yahoo's real host.
  return {
    ALPHA_VANTAGE_URL: upstream.url,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    DATA_MODE: 'live',
    QUOTE_FALLBACK: 'none',
  };
}

/** The largest number of calls inside any window of `windowMs` (a sliding count, as the provider does). */
export function maxInWindow(calls: number[], windowMs: number): number {
  const sorted = [...calls].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

export interface Answer {
  status: number;
  cache: string | undefined;
  retryAfter: number | undefined;
  code: string | undefined;
  message: string | undefined;
}

export async function ask(url: string): Promise<Answer> {
  const res = await request(url);
  const text = await res.body.text();
  let error: { code?: string; message?: string } | undefined;
  try {
    error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
  } catch {
    error = undefined;
  }
  const retry = res.headers['retry-after'];
  return {
    status: res.statusCode,
    cache: res.headers['x-cache'] as string | undefined,
    retryAfter: retry === undefined ? undefined : Number(retry),
    code: error?.code,
    message: error?.message,
  };
}
