// On two CPUs or more, a benchmark can keep the server under test on a CPU of its own and everything that loads it
// (a load generator, the stream readers, the simulators in the benchmark's process) on another, with taskset: a load
// generator on the server's own cores measures itself. The cache-hit benchmarks pin by default (wrk needs one CPU
// at most); the broker stream's latency only with BENCH_PIN=on (its readers may need more than one CPU, and on a
// machine shared with others a pinned server cannot move to the CPU that is free). BENCH_PIN=off pins nothing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Launch } from './processes.js';

const TASKSET = '/usr/bin/taskset';

export interface Pinning {
  /** What the reports say of it. */
  description: string;
  /** How a server under test is started. */
  serverLaunch: Launch;
  /** A command of the load, on CPU 0 (as it is, unpinned). */
  onLoadCpu(command: string, args: readonly string[]): [string, string[]];
  /** Every thread of a running process of the load on CPU 0; the returned function gives back the CPUs it had. */
  pinToLoadCpu(pid: number): () => void;
  /** The same, on the server's CPU 1 (a benchmark whose server is its own process). */
  pinToServerCpu(pid: number): () => void;
}

/** `byDefault`: pin unless BENCH_PIN=off (else only with BENCH_PIN=on), where taskset and a second CPU exist. */
export function pinning(byDefault: boolean): Pinning {
  const asked = process.env.BENCH_PIN === 'on' || (byDefault && process.env.BENCH_PIN !== 'off');
  if (!asked || !existsSync(TASKSET) || availableParallelism() < 2) {
    return {
      description: asked ? 'not pinned (taskset or a second CPU missing)' : 'not pinned (BENCH_PIN)',
      serverLaunch: {},
      onLoadCpu: (command, args) => [command, [...args]],
      pinToLoadCpu: () => () => {},
      pinToServerCpu: () => () => {},
    };
  }
  return {
    description: 'each server on CPU 1, its load on CPU 0 (taskset)',
    serverLaunch: { prefix: [TASKSET, '-c', '1'] },
    onLoadCpu: (command, args) => [TASKSET, ['-c', '0', command, ...args]],
    pinToLoadCpu: (pid) => pinTo('0', pid),
    pinToServerCpu: (pid) => pinTo('1', pid),
  };
}

/** Every thread of `pid` on `cpu`; the returned function gives back the CPUs it had. */
function pinTo(cpu: string, pid: number): () => void {
  const before = execFileSync(TASKSET, ['-p', '-c', String(pid)], { encoding: 'utf8' })
    .split(':')
    .at(-1)!
    .trim();
  execFileSync(TASKSET, ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
  return () => execFileSync(TASKSET, ['-a', '-p', '-c', before, String(pid)], { stdio: 'ignore' });
}
