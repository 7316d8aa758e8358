// Instructions per cache hit, counted by valgrind's callgrind: a figure that does not move with the machine's
// load (throughput and CPU time do, on shared cores), for comparing builds and settings while others work. The
// bare server and the service (live mode, provider A's simulator in its own process, as bench/cache-hit.ts
// runs them) each run under callgrind with `node --single-threaded` (V8's compiler and collector on the main
// thread, so they are counted and do not race). What is counted is what runs while a socket's bytes are read
// and answered (callgrind's --toggle-collect on libuv's read callback: the parser, the listener, the answer's
// writes, the ticks they queue, the collections their allocations trigger), not the timers and idle work of
// the process; and less V8's optimising compiler, which still compiles now and then after thousands of
// requests (a warm-up cost, tens of millions of instructions when it strikes a batch). After
// BENCH_WARM_REQUESTS answers (default 3,000), instructions are counted over BENCH_REQUESTS sequential
// keep-alive requests (default 1,000), in BENCH_BATCHES batches (default 5); the fewest a batch took is
// reported (a batch that met a major collection's marking takes tens of thousands more a request), with the
// median beside it.
// User-space instructions only: the kernel's share of a request (the socket's reads and writes) is the same for
// both.
// Each server takes a minute or two to start under valgrind, and a request about 20 ms: a configuration at
// both log levels takes some ten minutes. BENCH_CONFIGURATIONS and BENCH_LOG_LEVELS pick some (as
// bench/cache-hit.ts names them); BENCH_SERVICE_ENTRY measures another build. BENCH_CALLGRIND_DIR keeps the
// dumps there for callgrind_annotate (with NODE_OPTIONS=--perf-basic-prof, /tmp/perf-<pid>.map names the JIT
// code's addresses).
//   npm run build && npx tsx bench/cache-hit-instructions.ts          (needs valgrind: Debian's valgrind)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { median } from './autocannon-run.js';
import { CONFIGURATIONS, LOG_LEVELS, liveEnv, startBare, startProviderA } from './cache-hit.js';
import { type Child, type Launch, serviceEntry, startService } from './processes.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const WARM = Number(process.env.BENCH_WARM_REQUESTS ?? 3_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 5);
const VALGRIND = '/usr/bin/valgrind';

/** Under callgrind, counting nothing until told; its dumps go to `dir`. */
function underCallgrind(dir: string): Launch {
  return {
    // V8 writes and rewrites its code: valgrind must check every write to code outside files.
    prefix: [
      VALGRIND,
      '--tool=callgrind',
      '--instr-atstart=no',
      '--toggle-collect=*LibuvStreamWrap::OnUvRead*',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${dir}/cg.%p`,
    ],
    nodeOptions: ['--single-threaded'],
    readyMs: 600_000,
  };
}

function callgrind(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/** Sequential requests on one keep-alive connection. */
async function ask(client: Client, count: number, headers: Record<string, string>): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const res = await client.request({ path: PATH, method: 'GET', headers });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`);
  }
}

/** Instructions per request of `server`: the fewest of the batches, and their median. */
async function instructionsPerRequest(
  server: Child,
  dir: string,
  headers: Record<string, string>,
): Promise<{ least: number; median: number }> {
  const pid = server.process.pid!;
  const client = new Client(server.url, { pipelining: 1 });
  try {
    await ask(client, WARM, headers);
    const batches: number[] = [];
    for (let i = 0; i < BATCHES; i += 1) {
      callgrind(pid, '-z');
      callgrind(pid, '-i', 'on');
      await ask(client, REQUESTS, headers);
      callgrind(pid, '-i', 'off');
      callgrind(pid, '-d');
      batches.push(totals(dir, pid) / REQUESTS);
    }
    console.log(`    batches: ${batches.map((b) => Math.round(b)).join(', ')}`);
    return { least: Math.min(...batches), median: median(batches) };
  } finally {
    await client.close();
  }
}

/** V8's optimising compilers (Turbofan and Maglev, both entered here), inclusive. */
const COMPILING = /^\s*([\d,]+) \([^)]*\)\s+\S*v8::internal::Compiler::CompileOptimized\(/;

/** The instructions of the newest dump of `pid`, less those of V8's compilers. */
function totals(dir: string, pid: number): number {
  const newest = readdirSync(dir)
    .filter((f) => f.startsWith(`cg.${pid}.`))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
  const line = /^totals: (\d+)/m.exec(readFileSync(newest, 'utf8'));
  if (line === null) throw new Error(`no totals in ${newest}`);
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', newest], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  let compiling = 0;
  for (const row of annotated.split('\n')) compiling += Number(COMPILING.exec(row)?.[1]?.replaceAll(',', '') ?? 0);
  return Number(line[1]) - compiling;
}

export default async function cacheHitInstructions(): Promise<void> {
  if (!existsSync(VALGRIND)) {
    console.log(`\ninstructions per cache hit: skipped (${VALGRIND} is missing; Debian's valgrind package installs it)`);
    return;
  }
  const chosen = process.env.BENCH_CONFIGURATIONS?.split(',');
  const levels = process.env.BENCH_LOG_LEVELS?.split(',') ?? LOG_LEVELS.map(([level]) => level);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const kept = process.env.BENCH_CALLGRIND_DIR;
  const dir = kept ?? mkdtempSync(join(tmpdir(), 'mdp-callgrind-'));
  const providerA = await startProviderA();
  const rows: string[] = [];
  console.log(`\ninstructions per cache hit (callgrind, ${serviceEntry()}): ${REQUESTS} requests x ${BATCHES} batches after ${WARM}`);
  try {
    for (const [name, { env, headers }] of Object.entries(CONFIGURATIONS)) {
      if (chosen !== undefined && !chosen.includes(name)) continue;
      for (const level of levels) {
        const service = await startService({ ...liveEnv(providerA, stateDir), ...env, LOG_LEVEL: level }, underCallgrind(dir));
        let bare: Child | undefined;
        try {
          const started = await startBare(service, headers, underCallgrind(dir));
          bare = started.bare;
          console.log(`  ${name}, LOG_LEVEL=${level}: the service`);
          const served = await instructionsPerRequest(service, dir, headers);
          console.log('  the bare server');
          const bareCount = await instructionsPerRequest(bare, dir, headers);
          const cell = (n: number) => String(Math.round(n)).padStart(8);
          rows.push(
            `| ${`${name}, ${level}`.padEnd(34)} | ${cell(served.least)} (${cell(served.median)}) | ${cell(bareCount.least)} (${cell(bareCount.median)}) | ${cell(served.least - bareCount.least)} | ${(bareCount.least / served.least).toFixed(2)} |`,
          );
        } finally {
          await bare?.stop();
          await service.stop();
        }
      }
    }
    console.log(
      '| configuration, log level           | service, fewest (median) | bare, fewest (median) | service less bare | bare / service |',
    );
    for (const row of rows) console.log(row);
  } finally {
    await providerA.stop();
    rmSync(stateDir, { recursive: true, force: true });
    if (kept === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await cacheHitInstructions();
