// Soak (`npx tsx bench/soak.ts`, SOAK_SECONDS=600 by default): the real entry point in live mode against
// standalone simulators (run in this process, so their faults can be flipped over HTTP at
// /__sandbox/faults), moderate mixed load, and upstream faults switched on and off in turn.
// Every minute /metrics is scraped (RSS, event-loop delay, open file descriptors, sockets); the child's
// stdout and stderr are scanned for unhandled rejections and uncaught exceptions. Exit code 1 when the
// child died, logged one, leaked descriptors or sockets, or did not stop cleanly on SIGTERM.
//   SOAK_SECONDS=600   SOAK_RATE=100 (requests/s)   SOAK_FAULT_SECONDS=30 (each fault on, then off, for this long)
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/core/config.js';
import { type Sandbox, sandboxOptionsFor, startSandbox } from '../src/sandbox/index.js';
import type { Faults } from '../src/sandbox/simulated-upstream.js';
import { errorsOf, mixedRequests, ROTATING, rotator, tallyOf, tempStateDir } from './load.js';
import { freePort, liveAgainstSandbox, serviceEntry } from './processes.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 100);
const FAULT_SECONDS = Number(process.env.SOAK_FAULT_SECONDS ?? 30);

/** Faults in turn, each on one upstream; each is switched on for FAULT_SECONDS, then off for as long. */
const FAULT_PLAN: { upstream: keyof Omit<Sandbox, 'all' | 'close'>; faults: Partial<Faults> }[] = [
  { upstream: 'yahoo', faults: { fault: 'http5xx', status: 503 } },
  { upstream: 'alphaVantage', faults: { fault: 'malformed' } },
  { upstream: 'massive', faults: { latencyMs: 3_000, fault: null } },
  { upstream: 'ibkr', faults: { fault: 'drop' } },
  { upstream: 'yahoo', faults: { fault: 'reset-mid-body' } },
  { upstream: 'massive', faults: { fault: 'http429', retryAfter: 5 } },
  { upstream: 'ibkr', faults: { fault: 'slow-drip' } },
  { upstream: 'alphaVantage', faults: { fault: 'html200' } },
  { upstream: 'yahoo', faults: { fault: 'huge' } },
];

const UNHEALTHY_OUTPUT = /unhandled|uncaught|shutting down after an error|ERR_UNHANDLED_REJECTION/i;

interface Sample {
  at: number;
  label: string;
  rssMb: number;
  heapMb: number;
  lagMeanMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  openFds: number;
  sockets: number;
  handles: number;
}

/** The built entry point with stdout and stderr piped: every line is kept for the unhandled-rejection scan. */
async function startServiceProcess(env: Record<string, string>, suspicious: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [serviceEntry()], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      if (UNHEALTHY_OUTPUT.test(line)) suspicious.push(line.slice(0, 500));
    });
  }
  const url = `http://127.0.0.1:${env.PORT}`;
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode} before it was ready`);
    try {
      const res = await request(`${url}/api/system/live`);
      await res.body.dump();
      if (res.statusCode === 200) return { child, url };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error('service did not become ready in 30 s');
}

function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(metricsUrl: string, label: string, startedAt: number): Promise<Sample> {
  const res = await request(metricsUrl);
  const text = await res.body.text();
  const mb = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;
  const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;
  return {
    at: Math.round((Date.now() - startedAt) / 1000),
    label,
    rssMb: mb(metric(text, 'process_resident_memory_bytes')),
    heapMb: mb(metric(text, 'nodejs_heap_size_used_bytes')),
    lagMeanMs: ms(metric(text, 'nodejs_eventloop_lag_mean_seconds')),
    lagP99Ms: ms(metric(text, 'nodejs_eventloop_lag_p99_seconds')),
    lagMaxMs: ms(metric(text, 'nodejs_eventloop_lag_max_seconds')),
    openFds: metric(text, 'process_open_fds'),
    sockets: metric(text, 'nodejs_active_handles', '{type="Socket"}') || 0,
    handles: metric(text, 'nodejs_active_handles_total'),
  };
}

function printSample(s: Sample): void {
  console.log(
    `${String(s.at).padStart(5)} s  ${s.label.padEnd(22)} RSS ${String(s.rssMb).padStart(6)} MB  heap ${String(s.heapMb).padStart(6)} MB  loop delay mean ${String(s.lagMeanMs).padStart(5)} ms p99 ${String(s.lagP99Ms).padStart(6)} ms max ${String(s.lagMaxMs).padStart(6)} ms  fds ${String(s.openFds).padStart(4)}  sockets ${String(s.sockets).padStart(4)}  handles ${String(s.handles).padStart(4)}`,
  );
}

// The IBKR gateway simulator serves HTTPS with a self-signed certificate, as the real gateway does.
const control = new Agent({ connect: { rejectUnauthorized: false } });

async function setFaults(origin: string, faults: Partial<Faults> | null): Promise<void> {
  const res =
    faults === null
      ? await request(`${origin}/__sandbox/faults`, { method: 'DELETE', dispatcher: control })
      : await request(`${origin}/__sandbox/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(faults),
          dispatcher: control,
        });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`fault switch answered ${res.statusCode}`);
}

export async function soak(): Promise<boolean> {
  const state = tempStateDir('soak');
  const env0 = { ALPHA_VANTAGE_CALLS_PER_MINUTE: '5', ALPHA_VANTAGE_CALLS_PER_DAY: '500' };
  // The simulated plan follows the service's budget, as in sandbox mode.
  const sandbox = await startSandbox(sandboxOptionsFor(loadConfig(env0)));
  const suspicious: string[] = [];
  const metricsPort = await freePort();
  const env = { ...env0, ...liveAgainstSandbox(sandbox, state.dir), PORT: String(await freePort()), METRICS_PORT: String(metricsPort) };
  const { child, url } = await startServiceProcess(env, suspicious);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  let died = false;
  child.once('exit', () => {
    died = true;
  });
  const startedAt = Date.now();
  const samples: Sample[] = [];
  const record = async (label: string) => {
    const sample = await scrape(metricsUrl, label, startedAt);
    samples.push(sample);
    printSample(sample);
    return sample;
  };
  const faultLog: string[] = [];
  try {
    console.log(
      `\nSoak: ${SECONDS} s at ${RATE} req/s (mixed), RATE_LIMIT_PER_MINUTE=0, faults on/off every ${FAULT_SECONDS} s: ${FAULT_PLAN.map((f) => `${f.upstream}:${f.faults.fault ?? `latency ${f.faults.latencyMs} ms`}`).join(', ')}`,
    );
    const idleBefore = await record('idle, before load');
    const done = new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        { url, connections: 10, overallRate: RATE, duration: SECONDS, timeout: 15, requests: mixedRequests(rotator(ROTATING)) },
        (error, result) => (error ? reject(error as Error) : resolve(result)),
      );
    });
    // Faults on and off in turn, and a scrape every minute, until the load ends.
    let faultIndex = 0;
    let faultOn: (typeof FAULT_PLAN)[number] | undefined;
    let nextFlip = Date.now() + FAULT_SECONDS * 1000;
    let nextScrape = Date.now() + 60_000;
    let finished = false;
    void done.then(
      () => {
        finished = true;
      },
      () => {
        finished = true;
      },
    );
    while (!finished && !died) {
      await sleep(250);
      const now = Date.now();
      if (now >= nextFlip && now < startedAt + (SECONDS - 5) * 1000) {
        const at = Math.round((now - startedAt) / 1000);
        if (faultOn === undefined) {
          faultOn = FAULT_PLAN[faultIndex % FAULT_PLAN.length]!;
          faultIndex += 1;
          await setFaults(sandbox[faultOn.upstream].origin, faultOn.faults);
          faultLog.push(`${at}s ${faultOn.upstream} ${JSON.stringify(faultOn.faults)} on`);
        } else {
          await setFaults(sandbox[faultOn.upstream].origin, null);
          faultLog.push(`${at}s ${faultOn.upstream} off`);
          faultOn = undefined;
        }
        nextFlip = now + FAULT_SECONDS * 1000;
      }
      if (now >= nextScrape && !finished) {
        await record(samples.length === 1 ? 'under load (baseline)' : 'under load');
        nextScrape = now + 60_000;
      }
    }
    const result = await done;
    for (const upstream of sandbox.all()) upstream.clearFaults();
    // In-flight upstream calls (slow drip, latency) end within the upstream timeout; then the idle figures.
    await sleep(10_000);
    const idleAfter = await record('idle, after load');
    const tally = tallyOf(result);
    console.log(`faults: ${faultLog.join('; ')}`);
    console.log(
      `requests ${result.requests.total} (${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms): ` +
        `2xx ${tally.ok2xx}, 429 ${tally.quota429}, intended 4xx ${tally.intended4xx}, 5xx ${tally.status5xx} (degraded answers while an upstream failed), ` +
        `connection errors ${tally.connectionErrors}, timeouts ${tally.timeouts}; by status ${JSON.stringify(tally.byStatus)}`,
    );
    const baseline = samples.find((s) => s.label === 'under load (baseline)') ?? idleBefore;
    const lastUnderLoad = [...samples].reverse().find((s) => s.label.startsWith('under load')) ?? baseline;
    console.log(
      `start (1 min in) vs end under load: RSS ${baseline.rssMb} -> ${lastUnderLoad.rssMb} MB, heap ${baseline.heapMb} -> ${lastUnderLoad.heapMb} MB, loop delay p99 ${baseline.lagP99Ms} -> ${lastUnderLoad.lagP99Ms} ms, fds ${baseline.openFds} -> ${lastUnderLoad.openFds}`,
    );
    console.log(
      `idle before vs idle after: fds ${idleBefore.openFds} -> ${idleAfter.openFds}, sockets ${idleBefore.sockets} -> ${idleAfter.sockets}, handles ${idleBefore.handles} -> ${idleAfter.handles}`,
    );

    const problems: string[] = [];
    if (died) problems.push(`the service exited during the soak (code ${child.exitCode})`);
    if (suspicious.length > 0) problems.push(`suspicious output: ${suspicious.slice(0, 5).join(' | ')}`);
    // Idle after the load: the generator's 10 connections are gone; the upstream keep-alive pools may hold
    // a few more sockets than before (they were opened during the load). More than 20 is a leak.
    if (idleAfter.openFds > idleBefore.openFds + 20)
      problems.push(`file descriptors grew from ${idleBefore.openFds} to ${idleAfter.openFds}`);
    if (idleAfter.sockets > idleBefore.sockets + 20) problems.push(`sockets grew from ${idleBefore.sockets} to ${idleAfter.sockets}`);
    if (tally.connectionErrors + tally.timeouts > 0)
      problems.push(`${tally.connectionErrors} connection errors, ${tally.timeouts} timeouts`);
    void errorsOf;

    // Graceful stop after the soak: exit code 0.
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    console.log(`SIGTERM after the soak: exit code ${code}`);
    if (code !== 0) problems.push(`exit code ${code} on SIGTERM`);
    for (const p of problems) console.log(`PROBLEM: ${p}`);
    console.log(problems.length === 0 ? 'soak: OK' : 'soak: FAILED');
    return problems.length === 0;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await sandbox.close();
    state.remove();
  }
}

const ok = await soak();
process.exitCode = ok ? 0 : 1;
