// Mixed load at increasing concurrency until throughput stops growing (`npx tsx bench/load.ts`).
// The real entry point runs in sandbox mode in a child process; autocannon sends a mix of quote hits,
// quote misses on a rotating symbol set (the provider-A budget refuses most of them with the documented
// 429 QUOTA_EXHAUSTED), the market overview, broker quotes, dividends and 4xx error requests.
// "Errors" are 5xx answers, connection errors and timeouts; 429 and the intended 4xx are counted apart.
// RATE_LIMIT_PER_MINUTE=0 for the run: the per-caller limit would otherwise answer 429 to the generator.
//   BENCH_SECONDS=5 (per step)   LOAD_STEPS=1,4,16,64,256
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { startService } from './processes.js';

/** Symbols the "miss" requests rotate through; each is paid for at most once, then served from the cache. */
export const ROTATING = UNIVERSE.map((i) => i.symbol);

/** One request of the mix; `kind` groups the answers in the report. */
export interface MixedRequest {
  kind: 'quote-hit' | 'quote-miss' | 'overview' | 'broker-quotes' | 'dividends' | 'error-4xx';
  path: string;
}

/** Sees every answer with its headers (costs a body copy per answer: leave it out when measuring speed). */
export type AnswerObserver = (kind: MixedRequest['kind'], status: number, headers: Record<string, unknown>, body: string) => void;

/** The mix every connection cycles through, in order. `rotate()` gives the next "miss" symbol. */
export function mixedRequests(rotate: () => string, observe?: AnswerObserver): autocannon.Request[] {
  const fixed: MixedRequest[] = [
    { kind: 'quote-hit', path: '/api/provider-a/quote?symbol=AAPL' },
    { kind: 'quote-miss', path: '/api/provider-a/quote?symbol=MSFT' },
    { kind: 'overview', path: '/api/market/overview' },
    { kind: 'quote-hit', path: '/api/provider-a/quote?symbol=AAPL' },
    { kind: 'broker-quotes', path: '/api/broker/quotes?symbols=AAPL,MSFT,NVDA' },
    { kind: 'dividends', path: '/api/provider-b/dividends?symbol=AAPL' },
    { kind: 'error-4xx', path: '/api/provider-a/quote' },
    { kind: 'error-4xx', path: '/api/provider-a/quote?symbol=%3Cscript%3E' },
    { kind: 'error-4xx', path: '/api/no-such-route' },
  ];
  return fixed.map((r) => {
    const request: autocannon.Request = { method: 'GET', path: r.path };
    if (r.kind === 'quote-miss') {
      request.setupRequest = (req: autocannon.Request) => ({
        ...req,
        path: `/api/provider-a/quote?symbol=${encodeURIComponent(rotate())}`,
      });
    }
    if (observe !== undefined) {
      request.onResponse = (status, body, _context, headers) => observe(r.kind, status, (headers ?? {}) as Record<string, unknown>, body);
    }
    return request;
  });
}

/**
 * The same steady mixed load on every replica (6 connections, `rate` req/s each, for `seconds` or until
 * `until` aborts), the "miss" symbols rotating across all of them; `onError` hears every request that got no answer.
 */
export function steadyMixedLoad(
  urls: string[],
  rate: number,
  seconds: number,
  observe: AnswerObserver,
  onError: () => void,
  until?: AbortSignal,
): Promise<autocannon.Result[]> {
  const rotate = rotator(ROTATING);
  const runs = urls.map(
    (url) =>
      new Promise<autocannon.Result>((resolve, reject) => {
        const instance = autocannon(
          { url, connections: 6, overallRate: rate, duration: seconds, timeout: 10, requests: mixedRequests(rotate, observe) },
          (error, result) => (error ? reject(error as Error) : resolve(result)),
        );
        instance.on('reqError', onError);
        until?.addEventListener('abort', () => instance.stop(), { once: true });
      }),
  );
  return Promise.all(runs);
}

export function rotator(symbols: string[]): () => string {
  let i = 0;
  return () => symbols[i++ % symbols.length] as string;
}

/** Answers of one run, split the way the report needs them. */
export interface Tally {
  ok2xx: number;
  quota429: number;
  /** 400/404 on the error requests: intended. */
  intended4xx: number;
  status5xx: number;
  connectionErrors: number;
  timeouts: number;
  byStatus: Record<string, number>;
}

export function tallyOf(result: autocannon.Result): Tally {
  const byStatus: Record<string, number> = {};
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) byStatus[status] = stats?.count ?? 0;
  const sum = (pick: (status: number) => boolean) =>
    Object.entries(byStatus).reduce((n, [status, count]) => (pick(Number(status)) ? n + count : n), 0);
  return {
    ok2xx: sum((s) => s >= 200 && s < 300),
    quota429: sum((s) => s === 429),
    intended4xx: sum((s) => s >= 400 && s < 500 && s !== 429),
    status5xx: sum((s) => s >= 500),
    connectionErrors: result.errors - result.timeouts,
    timeouts: result.timeouts,
    byStatus,
  };
}

/** 5xx, connection errors and timeouts: what must stay 0. */
export function errorsOf(t: Tally): number {
  return t.status5xx + t.connectionErrors + t.timeouts;
}

export function tempStateDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `mdp-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Step {
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  tally: Tally;
}

/** The knee: the last step before throughput grows by less than 10 % (or the best step when it falls). */
export function kneeOf(steps: Step[]): Step {
  for (let i = 0; i + 1 < steps.length; i += 1) {
    const here = steps[i] as Step;
    const next = steps[i + 1] as Step;
    if (next.requestsPerSecond < here.requestsPerSecond * 1.1) return here;
  }
  return steps[steps.length - 1] as Step;
}

async function runStep(url: string, connections: number, seconds: number, rotate: () => string): Promise<Step> {
  const result = await autocannon({ url, connections, duration: seconds, timeout: 10, requests: mixedRequests(rotate) });
  return {
    connections,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    tally: tallyOf(result),
  };
}

export async function loadBench(): Promise<boolean> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const concurrency = (process.env.LOAD_STEPS ?? '1,4,16,64,256').split(',').map(Number);
  const state = tempStateDir('load');
  const service = await startService({ RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', STATE_DIR: state.dir });
  try {
    const rotate = rotator(ROTATING);
    // Warm-up: the hot keys get paid for once, and the JIT sees every route.
    await runStep(service.url, 4, 2, rotate);
    console.log(
      `\nMixed load (sandbox mode, RATE_LIMIT_PER_MINUTE=0, ${seconds} s per step): quote hits, rotating misses, overview, broker quotes, dividends, 4xx`,
    );
    console.log('conns     req/s   p50 ms   p99 ms      2xx   429 quota   4xx intended   5xx   conn err   timeouts');
    const steps: Step[] = [];
    for (const connections of concurrency) {
      const step = await runStep(service.url, connections, seconds, rotate);
      steps.push(step);
      const t = step.tally;
      console.log(
        `${String(connections).padStart(5)} ${String(step.requestsPerSecond).padStart(9)} ${String(step.p50Ms).padStart(8)} ${String(step.p99Ms).padStart(8)} ${String(t.ok2xx).padStart(8)} ${String(t.quota429).padStart(11)} ${String(t.intended4xx).padStart(14)} ${String(t.status5xx).padStart(5)} ${String(t.connectionErrors).padStart(10)} ${String(t.timeouts).padStart(10)}`,
      );
    }
    const knee = kneeOf(steps);
    const below = steps.filter((s) => s.connections <= knee.connections);
    const errorsBelow = below.reduce((n, s) => n + errorsOf(s.tally), 0);
    console.log(
      `knee: ${knee.connections} connections, ${knee.requestsPerSecond} req/s (p50 ${knee.p50Ms} ms, p99 ${knee.p99Ms} ms); errors at or below the knee: ${errorsBelow}`,
    );
    return errorsBelow === 0;
  } finally {
    await service.stop();
    state.remove();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(`node ${process.version}, ${new Date().toISOString()}`);
  const ok = await loadBench();
  process.exitCode = ok ? 0 : 1;
}
