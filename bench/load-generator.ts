// The load generator of the cache-hit benchmarks: wrk (C, one thread) when it is installed, pinned to a CPU of
// its own with the server under test pinned to another, so that the figures are the server's and not the load
// generator's: autocannon is a Node process, and on two shared cores it saturates before either server does,
// making a bare server and the service look alike. Without wrk (or with BENCH_LOAD_GENERATOR=autocannon),
// autocannon in this process, unpinned, as before; every benchmark prints which one it used.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Figures, measure as autocannonMeasure } from './autocannon-run.js';
import { type Pinning, pinning } from './cpu-pinning.js';
import type { Launch } from './processes.js';

const WRK = '/usr/bin/wrk';
/** wrk's connections: enough to keep one server core busy, as in the issue's measurements. */
const CONNECTIONS = 64;

export interface LoadGenerator {
  /** What the benchmark prints: the tool, its connections and where each side runs. */
  readonly description: string;
  /** How the servers under test are started: on their own CPU when the load generator has another. */
  readonly serverLaunch: Launch;
  measure(url: string, options: { duration: number; headers?: Record<string, string> }): Promise<Figures>;
}

/** wrk pinned beside the servers when it and taskset are installed and there are two CPUs, else autocannon. */
export function loadGenerator(): LoadGenerator {
  const chosen = process.env.BENCH_LOAD_GENERATOR;
  if (chosen !== 'autocannon' && existsSync(WRK)) {
    const pinned = pinning(true);
    return {
      description: `wrk (${WRK}, 1 thread, ${CONNECTIONS} connections), ${pinned.description}`,
      serverLaunch: pinned.serverLaunch,
      measure: (url, options) => wrk(url, options, pinned.onLoadCpu),
    };
  }
  if (chosen !== undefined && chosen !== 'autocannon' && chosen !== 'wrk')
    throw new Error(`BENCH_LOAD_GENERATOR: wrk or autocannon, not ${chosen}`);
  if (chosen === 'wrk') throw new Error(`BENCH_LOAD_GENERATOR=wrk but ${WRK} is missing (Debian: apt-get install wrk)`);
  return {
    description: `autocannon (50 connections, in the benchmark's process, sharing the CPUs with the servers${chosen === undefined ? `: ${WRK} is missing, Debian's wrk package installs it` : ''})`,
    serverLaunch: {},
    measure: (url, options) => autocannonMeasure(url, options),
  };
}

async function wrk(
  url: string,
  { duration, headers = {} }: { duration: number; headers?: Record<string, string> },
  onLoadCpu: Pinning['onLoadCpu'],
): Promise<Figures> {
  const args = [
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${duration}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
  ];
  const [command, all] = onLoadCpu(WRK, args);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, all, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
  });
  return parseWrk(out);
}

/** The figures of wrk's report (`--latency`). */
function parseWrk(out: string): Figures {
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? 0);
  const ms = (percentile: string) => {
    const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(out);
    if (match === null) return Number.NaN;
    const scale = { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
    return Math.round(Number(match[1]) * scale * 100) / 100;
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: number(/(\d+) requests in/),
    requestsPerSecond: Math.round(number(/Requests\/sec:\s+([\d.]+)/)),
    p50Ms: ms('50'),
    p99Ms: ms('99'),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors: errors === null ? 0 : errors.slice(1).reduce((sum, n) => sum + Number(n), 0),
  };
}
