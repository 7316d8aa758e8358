// A flood of new quote symbols, as one caller can send: each request asks a symbol never asked before, a cache
// miss that the quote service's demand tracker notes. At its bound (10,000 keys) the tracker evicts the coldest
// key for each new one. Once the bound is reached, the run alternates short rounds of that flood with rounds asking
// again symbols the tracker holds (noted in place, nothing evicted): the same route, the same refusal, one
// difference. When eviction scanned every key the flood ran slower (1,510 requests a second fell to about 1,064);
// with the heap the ratio stays near 1.
//
// Every answer is the same refusal (429 QUOTA_EXHAUSTED once the budgets are spent, as a flood spends them).
// Figures: throughput, the service's CPU time per request (from /proc), and, as the flood was first measured, the
// share of the service's CPU samples (--cpu-prof) spent in the tracker during the rounds of new symbols: a share
// moves far less than throughput with a shared machine's load.
// Settings: BENCH_ROUNDS (5) pairs of rounds of BENCH_SECONDS (2) each.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { median } from './autocannon-run.js';
import { cpuMicros } from './cache-hit.js';
import { type Child, startService } from './processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
/** The tracker's bound (src/services/demand-tracker.ts). */
const BOUND = 10_000;
/** The symbols asked again: the last ones of the fill, warmer each round than the flood's, so never evicted. */
const KNOWN = 2_000;

interface Round {
  perSecond: number;
  cpuMicros: number;
  statuses: string;
}

/** A span of the machine's monotonic clock in µs: V8 stamps profile samples on the same clock. */
type Span = [number, number];
const clock = () => Number(process.hrtime.bigint() / 1_000n);

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The share of the busy samples within `spans` whose own code is the demand tracker's (its file, or its heap). */
function trackerShare(profile: CpuProfile, spans: Span[]): number {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  let at = profile.startTime;
  let busy = 0;
  let tracker = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const frame = frames.get(id);
    if (frame === undefined || frame.functionName === '(idle)' || !spans.some(([from, to]) => at >= from && at <= to)) return;
    busy += 1;
    if (/demand-tracker|flatqueue/.test(frame.url)) tracker += 1;
  });
  return tracker / busy;
}

const quote = (n: number) => `/api/provider-a/quote?symbol=Q${n.toString(36).toUpperCase()}`;

async function round(service: Child, path: () => string, limit: { amount: number } | { duration: number }): Promise<Round> {
  const before = cpuMicros(service);
  const result = await autocannon({
    url: service.url,
    connections: 50,
    ...limit,
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: path() }) }],
  });
  const answered = result.requests.total;
  return {
    perSecond: answered / result.duration,
    cpuMicros: (cpuMicros(service) - before) / answered,
    statuses: `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, errors ${result.errors + result.timeouts}`,
  };
}

export default async function demandFloodBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  const profiles = join(stateDir, 'profile');
  mkdirSync(profiles);
  const service = await startService({
    STATE_DIR: stateDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profiles}`,
  });
  let stopped = false;
  try {
    let next = 0;
    const fresh = () => quote(next++);
    let again = 0;
    const known = () => quote(BOUND - KNOWN + (again++ % KNOWN));
    // Up to the bound (the budgets spent on the way, the code warm): from here each new symbol evicts one.
    await round(service, fresh, { amount: BOUND });
    const pairs: [Round, Round][] = [];
    const floods: Span[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const held = await round(service, known, { duration: SECONDS });
      const from = clock();
      pairs.push([held, await round(service, fresh, { duration: SECONDS })]);
      floods.push([from, clock()]);
    }
    // The profile is written as the service exits.
    await service.stop();
    stopped = true;
    const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
    const share = file === undefined ? Number.NaN : trackerShare(JSON.parse(readFileSync(join(profiles, file), 'utf8')), floods);
    console.log(`\ndemand tracker at its bound of ${BOUND} keys: ${ROUNDS} alternating rounds of ${SECONDS} s, 50 connections`);
    const line = (name: string, r: Round) =>
      `${name.padEnd(28)} ${Math.round(r.perSecond).toString().padStart(6)} req/s   CPU ${r.cpuMicros.toFixed(0).padStart(5)} µs/request   ${r.statuses}`;
    pairs.forEach(([held, flood], i) => {
      console.log(line(`round ${i + 1} symbols it holds`, held));
      console.log(line(`round ${i + 1} new symbols`, flood));
    });
    const throughput = median(pairs.map(([held, flood]) => flood.perSecond / held.perSecond));
    const cpu = median(pairs.map(([held, flood]) => held.cpuMicros / flood.cpuMicros));
    console.log(
      `median ratio, new symbols against held ones: throughput ${throughput.toFixed(2)}×, CPU per request ${cpu.toFixed(2)}× (1: no slower)`,
    );
    console.log(`CPU samples in the demand tracker while new symbols flood: ${(100 * share).toFixed(1)} %`);
  } finally {
    if (!stopped) await service.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await demandFloodBench();
