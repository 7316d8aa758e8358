// Quota economy: a Zipf-distributed dashboard workload over 50 symbols (s = 1.1), 20 requests a second
// for 180 s, against the Alpha Vantage simulator on the spec's budget (5 calls a minute, 500 a day, one a
// second) and the Yahoo chart simulator. Three variants on the same seeded sequence of symbols: the service
// with QUOTE_FALLBACK=yahoo, the service with QUOTE_FALLBACK=none, and a naive pass-through proxy.
//
// Time is scaled by SCALE so the run takes 180/SCALE s: every window shrinks by the same factor (the
// budget's minute and day, the provider's one-second spacing and the service's 1.2 s margin, Yahoo's
// budget minute, the quote's 60 s fresh window) and the request rate grows by it, so each simulated
// minute holds the same 1,200 requests against the same 5 calls. Ages are reported in simulated seconds
// (the Age header is whole real seconds, so they come in steps of SCALE s). The scale stays small on
// purpose: the margins scale down with it but timer and event-loop delays on a busy machine do not (at
// ×6 a loaded 2-core machine showed late sends that the scaled 33 ms spacing margin could not absorb).
//
// Judged per answer: real data (200 with a valid Global Quote for the symbol asked: ten fields, formats,
// the caller's symbol), bad data (a 200 that is not), refused (429), other errors; the source
// (X-Data-Source); provider-A budget violations judged at the simulator from each call's arrival time.
//
// The mixed drop-in workload: the same rate and key, through Alpha Vantage's own route
// (/api/provider-a/query) as a drop-in client calls it: GLOBAL_QUOTE (Zipf over the symbols), OVERVIEW
// (Zipf), CURRENCY_EXCHANGE_RATE (Zipf over 12 pairs) and NEWS_SENTIMENT (Zipf over the tickers), 55/20/15/10 %,
// each family cached for its window scaled like the quote's. Judged per function: real data (200 in Alpha
// Vantage's shape for what was asked), refused, other errors; provider calls and violations as above.
//
// Runnable alone: `npx tsx bench/quota-economy.ts` (BENCH_SIM_SECONDS changes the simulated length;
// BENCH_REDIS=cluster runs the service on one Redis node and on a Cluster, bench/redis-stores.ts;
// BENCH_WORKLOAD=quotes or drop-in runs one workload alone; BUDGET_RESERVE sets the fair shares' reserve, 0 for
// none; BENCH_PROXY=1 adds the service with every upstream call through a forward proxy, the npm `proxy` package in
// this process: HTTP_PROXY, with PROXY_ALSO_FOR=127.0.0.1 since the simulators listen on loopback).
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createProxy } from 'proxy';
import { Pool } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/deps.js';
import { createAlphaVantageSimulator } from '../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { createYahooSimulator } from '../src/sandbox/yahoo/yahoo-simulator.js';
import { QUOTE_FIELDS } from '../src/wire/alpha-vantage/bodies.js';
import { countingSimulator, type Limits, type Violations, violations } from './counted-calls.js';
import { onEachStore, type StoreVariant } from './redis-stores.js';

const SCALE = 2;
const SIM_SECONDS = Number(process.env.BENCH_SIM_SECONDS ?? 180);
const RATE_PER_SECOND = 20;
const MINUTE_MS = 60_000 / SCALE;
const DAY_MS = 86_400_000 / SCALE;
const PER_MINUTE = 5;
const PER_DAY = 500;
/** The provider's rule (one call a second), which the judge applies at arrival. */
const SPACING_MS = Math.round(1_000 / SCALE);
const LIMITS: Limits = { minuteMs: MINUTE_MS, perMinute: PER_MINUTE, dayMs: DAY_MS, perDay: PER_DAY, spacingMs: SPACING_MS };
const QUOTE_FRESH_SECONDS = 60 / SCALE;
const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock')
  .slice(0, 50)
  .map((i) => i.symbol);
const ZIPF_S = 1.1;
const MAX_IN_FLIGHT = 256;

interface Tally {
  requests: number;
  real: number;
  fresh: number;
  stale: number;
  refused: number;
  bad: number;
  errors: number;
  bySource: Record<string, number>;
  /** Simulated seconds. */
  ages: number[];
  /** Per Alpha Vantage function (the drop-in workload): requests and real answers. */
  byKind: Record<string, { requests: number; real: number; stale: number }>;
}

interface Outcome {
  name: string;
  tally: Tally;
  primaryCalls: number;
  /** Provider A's calls by function. */
  primaryByFunction: Record<string, number>;
  yahooCalls: number;
  /** Judged at the simulator, from each call's arrival. */
  violations: Violations;
  /** Judged on the service's own ledger: the send slot each call reserved. */
  ledger: Violations | undefined;
}

export default async function quotaEconomyBench(): Promise<void> {
  const durationMs = (SIM_SECONDS * 1_000) / SCALE;
  const workload = process.env.BENCH_WORKLOAD;
  console.log(
    `\nquota economy: ${SYMBOLS.length} symbols (Zipf s=${ZIPF_S}), ${RATE_PER_SECOND} req/s for ${SIM_SECONDS} s simulated (${durationMs / 1000} s real, time ×${SCALE}); provider A ${PER_MINUTE}/minute, ${PER_DAY}/day, 1/s; quote fresh 60 s`,
  );
  const results: Outcome[] = [];
  const dropIn: Outcome[] = [];
  await onEachStore(async (store) => {
    if (workload !== 'drop-in')
      for (const fallback of ['yahoo', 'none'] as const) results.push(await runService(fallback, durationMs, store, quotes));
    if (workload !== 'quotes') dropIn.push(await runService('yahoo', durationMs, store, mixedDropIn()));
  });
  // The pass-through comparison: every request a provider call (BENCH_NAIVE=1 adds it).
  if (process.env.BENCH_NAIVE === '1' && workload !== 'drop-in') results.push(await runNaive(durationMs));
  if (process.env.BENCH_PROXY === '1' && workload !== 'drop-in')
    results.push(await throughProxy((env) => runService('yahoo', durationMs, { name: '', env }, quotes)));
  if (results.length > 0) printQuotes(results);
  if (dropIn.length > 0) printDropIn(dropIn);
}

function printQuotes(results: Outcome[]): void {
  console.log(
    `${'variant'.padEnd(58)}${'requests'.padStart(9)}${'real'.padStart(8)}${'fresh'.padStart(8)}${'stale'.padStart(8)}${'refused'.padStart(9)}${'bad'.padStart(5)}${'errors'.padStart(8)}   sources (AV/Yahoo)   age p50/p95 s   calls AV/Yahoo   AV violations at arrival / in the ledger (minute/day/spacing)`,
  );
  for (const { name, tally, primaryCalls, yahooCalls, violations, ledger } of results) {
    const pct = (n: number) => `${((100 * n) / Math.max(1, tally.requests)).toFixed(1)}%`;
    const sources = `${pct(tally.bySource['alpha-vantage'] ?? 0)}/${pct(tally.bySource.yahoo ?? 0)}`;
    const ages = `${percentile(tally.ages, 0.5)}/${percentile(tally.ages, 0.95)}`;
    console.log(
      `${name.padEnd(58)}${String(tally.requests).padStart(9)}${pct(tally.real).padStart(8)}${pct(tally.fresh).padStart(8)}${pct(tally.stale).padStart(8)}${pct(tally.refused).padStart(9)}${String(tally.bad).padStart(5)}${String(tally.errors).padStart(8)}   ${sources.padEnd(18)}   ${ages.padEnd(13)}   ${`${primaryCalls}/${yahooCalls}`.padEnd(14)}   ${show(violations)} / ${ledger === undefined ? '-' : show(ledger)}`,
    );
  }
  console.log(
    'real = 200 with a valid Global Quote for the symbol asked (fresh or stale); targets: yahoo ≥ 99 % real, none ≥ 62 % real, 0 bad, 0 AV violations',
  );
  console.log(
    'arrival is stamped as the simulator receives the request, in the same process as the load: an event-loop stall there moves arrivals, not sends',
  );
}

function printDropIn(results: Outcome[]): void {
  console.log('\nmixed drop-in workload through /api/provider-a/query, one key (quotes with the Yahoo fallback)');
  console.log(
    `${'variant / function'.padEnd(44)}${'requests'.padStart(9)}${'real'.padStart(8)}${'stale'.padStart(8)}${'refused'.padStart(9)}${'bad'.padStart(5)}${'errors'.padStart(8)}   calls AV/Yahoo   AV violations at arrival / in the ledger (minute/day/spacing)`,
  );
  for (const { name, tally, primaryCalls, primaryByFunction, yahooCalls, violations, ledger } of results) {
    const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}%`;
    console.log(
      `${name.padEnd(44)}${String(tally.requests).padStart(9)}${pct(tally.real, tally.requests).padStart(8)}${pct(tally.stale, tally.requests).padStart(8)}${pct(tally.refused, tally.requests).padStart(9)}${String(tally.bad).padStart(5)}${String(tally.errors).padStart(8)}   ${`${primaryCalls}/${yahooCalls}`.padEnd(14)}   ${show(violations)} / ${ledger === undefined ? '-' : show(ledger)}`,
    );
    for (const [kind, k] of Object.entries(tally.byKind))
      console.log(
        `${`  ${kind}`.padEnd(44)}${String(k.requests).padStart(9)}${pct(k.real, k.requests).padStart(8)}${pct(k.stale, k.requests).padStart(8)}${' '.repeat(30)}   ${primaryByFunction[kind] ?? 0}`,
      );
  }
  console.log("real = 200 in Alpha Vantage's shape for what was asked (fresh or stale); target: 0 bad, 0 AV violations");
}

const show = (v: Violations) => `${v.minute}/${v.day}/${v.spacing}`;

async function runService(fallback: 'yahoo' | 'none', durationMs: number, store: StoreVariant, workload: Workload): Promise<Outcome> {
  const av = await countingSimulator(
    createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey], callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 }),
    '/query',
  );
  const yahoo = await countingSimulator(createYahooSimulator(), undefined);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-economy-'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_MODE: 'live',
    BROKER: 'none',
    STATE_DIR: stateDir,
    ALPHA_VANTAGE_URL: `${av.upstream.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    YAHOO_URL: yahoo.upstream.origin,
    QUOTE_FALLBACK: fallback,
    RATE_LIMIT_PER_MINUTE: '0',
    CACHE_QUOTE_FRESH_SECONDS: String(QUOTE_FRESH_SECONDS),
    CACHE_QUOTE_STALE_SECONDS: '86400',
    // The forwarded families' windows, scaled like the quote's.
    CACHE_AV_FUNDAMENTALS_SECONDS: String(86_400 / SCALE),
    CACHE_AV_FX_SECONDS: String(60 / SCALE),
    CACHE_AV_NEWS_SECONDS: String(900 / SCALE),
    // BUDGET_RESERVE=0 runs the lone caller without fair shares (it is the only caller here).
    ...(process.env.BUDGET_RESERVE === undefined ? {} : { BUDGET_RESERVE: process.env.BUDGET_RESERVE }),
    ...store.env,
  });
  const logger = pino({ level: 'silent' });
  // The scaled windows: the provider-A spacing is the configured default (1200 ms for the provider's 1 s), scaled too.
  const minIntervalMs = Math.round(config.alphaVantage.minIntervalMs / SCALE);
  const deps = await createDeps(config, logger, {
    budgets: {
      alphaVantage: { perMinute: PER_MINUTE, perDay: PER_DAY, minIntervalMs, minuteMs: MINUTE_MS, dayMs: DAY_MS },
      yahoo: { perMinute: config.yahoo.callsPerMinute, perDay: 0, minIntervalMs: 0, minuteMs: MINUTE_MS, dayMs: DAY_MS },
    },
  });
  const app = await buildApp(config, { logger, deps });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const tally = await drive(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, durationMs, workload);
    const ledger = deps.store.db
      ?.prepare('SELECT at FROM budget_calls WHERE name = ? ORDER BY at')
      .all(deps.scopes.of('alphaVantage'))
      .map((row) => Number(row.at));
    return {
      name: workload === quotes ? `service, fallback ${fallback}${store.name}` : `service, drop-in${store.name}`,
      tally,
      primaryCalls: av.calls.length,
      primaryByFunction: av.byFunction,
      yahooCalls: yahoo.calls.length,
      violations: violations(av.calls, LIMITS, 5),
      ledger: ledger === undefined ? undefined : violations(ledger, LIMITS, 0),
    };
  } finally {
    await app.close();
    await Promise.all([av.upstream.close(), yahoo.upstream.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** A run with every upstream call tunnelled through a forward proxy (its CONNECTs counted and printed). */
async function throughProxy(run: (env: Record<string, string>) => Promise<Outcome>): Promise<Outcome> {
  const proxy = createProxy(createServer());
  let connects = 0;
  proxy.prependListener('connect', () => {
    connects += 1;
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  try {
    const outcome = await run({ HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, PROXY_ALSO_FOR: '127.0.0.1' });
    return { ...outcome, name: `${outcome.name}, through a proxy (${connects} CONNECTs)` };
  } finally {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  }
}

/** What a dashboard gets without this service: every request goes to the provider. */
async function runNaive(durationMs: number): Promise<Outcome> {
  const av = await countingSimulator(
    createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey], callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 }),
    '/query',
  );
  const upstream = new Pool(av.upstream.origin, { connections: 64 });
  const server = createServer((req, res) => {
    const symbol = new URL(req.url ?? '/', 'http://x').searchParams.get('symbol') ?? '';
    const path = `/query?function=GLOBAL_QUOTE&symbol=${encodeURIComponent(symbol)}&apikey=${SANDBOX_CREDENTIALS.alphaVantageKey}`;
    upstream.request({ method: 'GET', path }).then(
      async (answer) => {
        const body = await answer.body.text();
        res.writeHead(answer.statusCode, {
          'content-type': 'application/json',
          'x-cache': 'MISS',
          'x-data-source': 'alpha-vantage',
          age: '0',
        });
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
    const tally = await drive(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, durationMs, quotes);
    return {
      name: 'naive pass-through',
      tally,
      primaryCalls: av.calls.length,
      primaryByFunction: av.byFunction,
      yahooCalls: 0,
      violations: violations(av.calls, LIMITS, 5),
      ledger: undefined,
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await upstream.close();
    await av.upstream.close();
  }
}

/** One request of a workload: its path, the Alpha Vantage function it calls, and what makes its answer real. */
interface Ask {
  kind: string;
  path: string;
  symbol: string;
  isReal: (text: string) => boolean;
}

/** The next request of a workload, from its own seeded random sequence. */
type Workload = (random: () => number) => () => Ask;

/** The dashboard's quotes: /api/provider-a/quote, Zipf over the symbols. */
const quotes: Workload = (random) => {
  const pick = zipf(SYMBOLS.length, ZIPF_S, random);
  return () => {
    const symbol = SYMBOLS[pick()] as string;
    return {
      kind: 'GLOBAL_QUOTE',
      path: `/api/provider-a/quote?symbol=${encodeURIComponent(symbol)}`,
      symbol,
      isReal: (t) => isQuoteFor(t, symbol),
    };
  };
};

const PAIRS = [
  'EUR/USD',
  'USD/JPY',
  'GBP/USD',
  'USD/CHF',
  'AUD/USD',
  'USD/CAD',
  'EUR/GBP',
  'EUR/JPY',
  'BTC/USD',
  'ETH/USD',
  'USD/CNY',
  'USD/INR',
];

/** A drop-in client's mix over one key: quotes, fundamentals, exchange rates and news. */
function mixedDropIn(): Workload {
  return (random) => {
    const symbol = zipf(SYMBOLS.length, ZIPF_S, random);
    const pair = zipf(PAIRS.length, ZIPF_S, random);
    const query = (params: string) => `/api/provider-a/query?${params}&apikey=caller-key`;
    return () => {
      const r = random();
      const s = SYMBOLS[symbol()] as string;
      if (r < 0.55)
        return { kind: 'GLOBAL_QUOTE', path: query(`function=GLOBAL_QUOTE&symbol=${s}`), symbol: s, isReal: (t) => isQuoteFor(t, s) };
      if (r < 0.75)
        return { kind: 'OVERVIEW', path: query(`function=OVERVIEW&symbol=${s}`), symbol: s, isReal: (t) => field(t, 'Symbol') === s };
      if (r < 0.9) {
        const [from, to] = (PAIRS[pair()] as string).split('/') as [string, string];
        return {
          kind: 'CURRENCY_EXCHANGE_RATE',
          path: query(`function=CURRENCY_EXCHANGE_RATE&from_currency=${from}&to_currency=${to}`),
          symbol: `${from}/${to}`,
          isReal: (t) => field(t, 'Realtime Currency Exchange Rate', '3. To_Currency Code') === to,
        };
      }
      return {
        kind: 'NEWS_SENTIMENT',
        path: query(`function=NEWS_SENTIMENT&tickers=${s}`),
        symbol: s,
        isReal: (t) => Array.isArray(field(t, 'feed')),
      };
    };
  };
}

/** A value in a JSON text, or undefined. */
function field(text: string, ...path: string[]): unknown {
  try {
    let value: unknown = JSON.parse(text);
    for (const key of path) value = (value as Record<string, unknown> | undefined)?.[key];
    return value;
  } catch {
    return undefined;
  }
}

/** Requests at a fixed rate (open loop: a slow answer does not slow the callers down). */
async function drive(base: string, durationMs: number, workload: Workload): Promise<Tally> {
  const pool = new Pool(base, { connections: 64, pipelining: 1 });
  const tally: Tally = { requests: 0, real: 0, fresh: 0, stale: 0, refused: 0, bad: 0, errors: 0, bySource: {}, ages: [], byKind: {} };
  const next = workload(seeded(42));
  const intervalMs = 1_000 / (RATE_PER_SECOND * SCALE);
  const started = Date.now();
  const total = Math.floor(durationMs / intervalMs);
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < total; i += 1) {
    const due = started + i * intervalMs;
    if (due > Date.now()) await sleep(due - Date.now());
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const one = ask(pool, next(), tally).finally(() => inFlight.delete(one));
    inFlight.add(one);
  }
  await Promise.all(inFlight);
  await pool.close();
  return tally;
}

async function ask(pool: Pool, request: Ask, tally: Tally): Promise<void> {
  tally.requests += 1;
  const kind = tally.byKind[request.kind] ?? { requests: 0, real: 0, stale: 0 };
  tally.byKind[request.kind] = kind;
  kind.requests += 1;
  try {
    const res = await pool.request({ method: 'GET', path: request.path });
    const body = await res.body.text();
    if (res.statusCode === 429) tally.refused += 1;
    else if (res.statusCode !== 200) tally.errors += 1;
    else if (!request.isReal(body)) tally.bad += 1;
    else {
      tally.real += 1;
      kind.real += 1;
      if (res.headers['x-cache'] === 'STALE') {
        tally.stale += 1;
        kind.stale += 1;
      } else tally.fresh += 1;
      const source = String(res.headers['x-data-source'] ?? 'none');
      tally.bySource[source] = (tally.bySource[source] ?? 0) + 1;
      tally.ages.push(Number(res.headers.age ?? 0) * SCALE);
    }
  } catch {
    tally.errors += 1;
  }
}

const FORMATS: Record<string, RegExp> = {
  '05. price': /^\d+\.\d{4}$/,
  '08. previous close': /^\d+\.\d{4}$/,
  '09. change': /^-?\d+\.\d{4}$/,
  '10. change percent': /^-?\d+\.\d{4}%$/,
  '07. latest trading day': /^\d{4}-\d{2}-\d{2}$/,
};

function isQuoteFor(text: string, symbol: string): boolean {
  try {
    const quote = (JSON.parse(text) as { 'Global Quote'?: Record<string, string> })['Global Quote'];
    if (quote === undefined || Object.keys(quote).length !== QUOTE_FIELDS.length || quote['01. symbol'] !== symbol) return false;
    return Object.entries(FORMATS).every(([field, format]) => format.test(quote[field] ?? ''));
  } catch {
    return false;
  }
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

function zipf(n: number, s: number, random: () => number): () => number {
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) {
    sum += w / total;
    cumulative.push(sum);
  }
  return () => {
    const r = random();
    const i = cumulative.findIndex((c) => r <= c);
    return i === -1 ? n - 1 : i;
  };
}

/** Deterministic, so every variant sees the same sequence of symbols. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await quotaEconomyBench();
