// A failover test run again and again, each run in a process of its own, and the tally printed
// (`npx tsx bench/failover-repeat.ts [runs]`): a failure of one run in seven does not show in one run.
//   FAILOVER_RUNS=30 (or the first argument)
//   FAILOVER_TEST=test/economy/redis-failover.test.ts (the Sentinel's; test/economy/redis-cluster-failover.test.ts for the Cluster's)
// Prints each run's outcome, the seconds until every replica settled and the watch's rescues (the test's
// diagnostic), then passes/failures; exit code 1 on any failure.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const RUNS = Number(process.argv[2] ?? process.env.FAILOVER_RUNS ?? 30);
const FILE = process.env.FAILOVER_TEST ?? 'test/economy/redis-failover.test.ts';

interface Run {
  ok: boolean;
  seconds: number;
  /** The test's diagnostic line ("settled … s after the loss; rescues: …"), or the failure's first line. */
  detail: string;
}

function runOnce(): Promise<Run> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=180000', FILE], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      const line = (pattern: RegExp) =>
        output
          .split('\n')
          .find((l) => pattern.test(l))
          ?.trim();
      const detail = code === 0 ? (line(/settled .* after the loss/) ?? '') : (line(/Error|timed out/) ?? `exit code ${code}`);
      resolve({ ok: code === 0, seconds: (Date.now() - started) / 1000, detail: detail.replace(/^ℹ\s*/, '').slice(0, 400) });
      if (code !== 0) process.stderr.write(`${output}\n`);
    });
  });
}

async function failoverRepeat(runs = RUNS): Promise<boolean> {
  console.log(`\n${FILE}, ${runs} runs, one process each (node ${process.version}, ${new Date().toISOString()})`);
  let passes = 0;
  for (let run = 1; run <= runs; run += 1) {
    const result = await runOnce();
    if (result.ok) passes += 1;
    console.log(`run ${String(run).padStart(2)}: ${result.ok ? 'pass' : 'FAIL'} in ${result.seconds.toFixed(0)} s  ${result.detail}`);
  }
  console.log(`passes ${passes}, failures ${runs - passes} of ${runs}`);
  return passes === runs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = (await failoverRepeat()) ? 0 : 1;
}
