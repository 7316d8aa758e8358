// Quota economy: a Zipf-distributed dashboard workload over 50 symbols from many callers, against the
// Alpha Vantage simulator, with the real budget shape scaled in time (a "minute" of 2 s). Compares the
// service (in-process, embedded store) with a naive pass-through proxy on the same workload, and counts
// budget violations at the upstream from the arrival time of every call.
//
// Runnable alone: `npx tsx bench/quota-economy.ts` (BENCH_SECONDS sets the length; default 10 -> 20 s).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Pool } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { createAlphaVantageSimulator } from '../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import type { SimulatedUpstream } from '../src/sandbox/simulated-upstream.js';
import { UNIVERSE } from '../src/sandbox/universe.js';

/** Real time per simulated minute: 2 s stands for 60 s (a factor of 30). */
const SCALE = 30;
const MINUTE_MS = 60_000 / SCALE;
/** The free-key shape: 5 a minute, 25 a day, one call a second; the "day" is the whole run. */
const PER_MINUTE = 5;
const PER_DAY = 25;
/** The provider's rule (one call a second), which the judge applies at arrival. */
const SPACING_MS = Math.round(1_000 / SCALE);
const CALLERS = 40;
const THINK_MS = 20;
const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').slice(0, 50).map((i) => i.symbol);
const ZIPF_S = 1.1;

interface Tally {
  requests: number;
  fresh: number;
  stale: number;
  refused: number;
  errors: number;
}

interface Outcome {
  name: string;
  tally: Tally;
  upstreamCalls: number;
  violations: { minute: number; day: number; spacing: number };
}

export default async function quotaEconomyBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const durationMs = Math.max(6, seconds * 2) * 1_000;
  const dayMs = durationMs;
  console.log(
    `\nquota economy: ${SYMBOLS.length} symbols (Zipf s=${ZIPF_S}), ${CALLERS} callers, ${durationMs / 1000} s; budget ${PER_MINUTE}/"minute" (${MINUTE_MS} ms), ${PER_DAY}/"day" (${dayMs / 1000} s), spacing ${SPACING_MS} ms at the provider (the service keeps its configured margin, scaled likewise); quote fresh 1 "minute"`,
  );
  const results = [await runService(durationMs, dayMs), await runNaive(durationMs, dayMs)];
  console.log(`${'variant'.padEnd(24)}${'requests'.padStart(10)}${'fresh'.padStart(9)}${'stale'.padStart(9)}${'refused'.padStart(9)}${'errors'.padStart(8)}${'upstream'.padStart(10)}   violations (minute/day/spacing)`);
  for (const { name, tally, upstreamCalls, violations } of results) {
    const pct = (n: number) => `${((100 * n) / Math.max(1, tally.requests)).toFixed(1)}%`;
    console.log(
      `${name.padEnd(24)}${String(tally.requests).padStart(10)}${pct(tally.fresh).padStart(9)}${pct(tally.stale).padStart(9)}${pct(tally.refused).padStart(9)}${String(tally.errors).padStart(8)}${String(upstreamCalls).padStart(10)}   ${violations.minute}/${violations.day}/${violations.spacing}`,
    );
  }
  const [service, naive] = results as [Outcome, Outcome];
  console.log(`upstream calls: service ${service.upstreamCalls} vs naive ${naive.upstreamCalls} (${(naive.upstreamCalls / Math.max(1, service.upstreamCalls)).toFixed(0)}x); budget violations must be 0 for the service`);
}

async function runService(durationMs: number, dayMs: number): Promise<Outcome> {
  const sim = await countingSimulator();
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-economy-'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_MODE: 'live',
    BROKER: 'none',
    STATE_DIR: stateDir,
    ALPHA_VANTAGE_URL: `${sim.upstream.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    RATE_LIMIT_PER_MINUTE: '0',
    CACHE_QUOTE_FRESH_SECONDS: String(MINUTE_MS / 1000),
    CACHE_QUOTE_STALE_SECONDS: '86400',
  });
  const logger = pino({ level: 'silent' });
  const deps = await createDeps(config, logger);
  // The route asks for this guard by name; registering it first gives it the scaled windows. Its spacing
  // is the configured default (1200 ms for the provider's 1 s, a margin for arrival jitter), scaled too.
  const minIntervalMs = Math.round(config.alphaVantage.minIntervalMs / SCALE);
  deps.budgets.get('alphaVantage', { perMinute: PER_MINUTE, perDay: PER_DAY, minIntervalMs, minuteMs: MINUTE_MS, dayMs });
  const app = await buildApp(config, { logger, deps });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const tally = await drive(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, durationMs);
    return { name: 'service', tally, upstreamCalls: sim.calls.length, violations: violations(sim.calls, dayMs) };
  } finally {
    await app.close();
    await sim.upstream.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** What a dashboard gets without this service: every request goes to the provider. */
async function runNaive(durationMs: number, dayMs: number): Promise<Outcome> {
  const sim = await countingSimulator();
  const upstream = new Pool(sim.upstream.origin, { connections: CALLERS });
  const server = createServer((req, res) => {
    const symbol = new URL(req.url ?? '/', 'http://x').searchParams.get('symbol') ?? '';
    const path = `/query?function=GLOBAL_QUOTE&symbol=${encodeURIComponent(symbol)}&apikey=${SANDBOX_CREDENTIALS.alphaVantageKey}`;
    upstream.request({ method: 'GET', path }).then(
      async (answer) => {
        const body = await answer.body.text();
        res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'x-cache': 'MISS' });
        res.end(body);
      },
      () => {
        res.writeHead(502);
        res.end();
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const tally = await drive(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, durationMs);
    return { name: 'naive pass-through', tally, upstreamCalls: sim.calls.length, violations: violations(sim.calls, dayMs) };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await upstream.close();
    await sim.upstream.close();
  }
}

/** The simulator with its own limits off, recording when each call arrived: we judge the budget. */
async function countingSimulator(): Promise<{ upstream: SimulatedUpstream; calls: number[] }> {
  const upstream = createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey], callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 });
  await upstream.listen();
  const calls: number[] = [];
  upstream.on('request', (event: { path: string }) => {
    if (event.path === '/query') calls.push(Date.now());
  });
  return { upstream, calls };
}

async function drive(base: string, durationMs: number): Promise<Tally> {
  const pool = new Pool(base, { connections: CALLERS });
  const tally: Tally = { requests: 0, fresh: 0, stale: 0, refused: 0, errors: 0 };
  const pick = zipf(SYMBOLS.length, ZIPF_S, seeded(42));
  const until = Date.now() + durationMs;
  const caller = async () => {
    while (Date.now() < until) {
      const symbol = SYMBOLS[pick()] as string;
      const res = await pool.request({ method: 'GET', path: `/api/provider-a/quote?symbol=${symbol}` });
      const body = await res.body.text();
      tally.requests += 1;
      if (res.statusCode === 200 && res.headers['x-cache'] === 'STALE') tally.stale += 1;
      else if (res.statusCode === 200 && !/"(Note|Information)"/.test(body)) tally.fresh += 1;
      else if (res.statusCode === 429) tally.refused += 1;
      else tally.errors += 1;
      await new Promise((resolve) => setTimeout(resolve, THINK_MS));
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  await pool.close();
  return tally;
}

/** Calls over each limit, judged at arrival: more than the budget in any window, or closer than the spacing. */
function violations(calls: number[], dayMs: number): Outcome['violations'] {
  const sorted = [...calls].sort((a, b) => a - b);
  const over = (windowMs: number, limit: number) => {
    let count = 0;
    let start = 0;
    for (let end = 0; end < sorted.length; end += 1) {
      while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start += 1;
      if (end - start + 1 > limit) count += 1;
    }
    return count;
  };
  // Arrival adds a few ms of jitter to send times; 5 ms of tolerance keeps that from counting.
  const spacing = sorted.slice(1).filter((at, i) => at - (sorted[i] as number) < SPACING_MS - 5).length;
  return { minute: over(MINUTE_MS, PER_MINUTE), day: over(dayMs, PER_DAY), spacing };
}

function zipf(n: number, s: number, random: () => number): () => number {
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  return () => {
    const r = random();
    const i = cumulative.findIndex((c) => r <= c);
    return i === -1 ? n - 1 : i;
  };
}

/** Deterministic, so both variants see the same sequence of symbols per run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await quotaEconomyBench();
