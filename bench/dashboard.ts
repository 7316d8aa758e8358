// A whole dashboard on a free key: 10 symbols, each a quote and five daily indicators (RSI 14, MACD,
// BBANDS 20, SMA 50, EMA 20), all asked every 20 s, against the simulators on the free plan: provider A 25
// calls a day, 5 a minute, 1 a second (the simulator enforcing them too), Yahoo at its default budget of
// 60 a minute. Two runs with TECHNICAL_SOURCE=auto (the default):
//  - four rounds 20 s apart, from a cold service;
//  - a trading day, 09:25 to 16:00 in New York, the same load every 20 s.
// Time is scaled: the simulators run on a clock SCALE times faster than the wall (prices, sessions, their
// own call limits), and every window of the service shrinks by the same factor (provider A's minute, day
// and spacing, Yahoo's budget minute, the QUOTE and TECHNICAL fresh and stale windows), so each simulated
// minute holds the same requests against the same budgets. The margins on the provider's limits scale
// down with it (see quota-economy.ts on why the factor stays moderate); provider A's calls are judged at the
// simulator on its scaled clock, which refuses a call over any of its limits.
//
// Judged per answer: real data (200 with a valid body for the symbol and indicator asked: the ten quote
// fields, or Meta Data naming the symbol, indicator and parameters with at least one row of 4-decimal
// values, newest first), and its source (X-Data-Source). Printed: calls per source, per round for the
// first run, answers per source per endpoint (how `auto` decided), and met / NOT met per target. Then the
// stored-bar footprint per symbol: bytes in the state store for the daily series and each intraday one.
//
// Runnable alone: `npx tsx bench/dashboard.ts` (BENCH_DAY_SCALE changes the trading day's factor).
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { Pool } from 'undici';
import { buildApp } from '../src/app.js';
import { type Config, loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/deps.js';
import { createAlphaVantageSimulator } from '../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import type { SimulatedUpstream } from '../src/sandbox/simulated-upstream.js';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { createYahooSimulator } from '../src/sandbox/yahoo/yahoo-simulator.js';
import { QUOTE_FIELDS } from '../src/wire/alpha-vantage/bodies.js';
import { indicatorSpec, INTERVALS, sectionKey } from '../src/wire/alpha-vantage/indicators.js';

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock')
  .slice(0, 10)
  .map((i) => i.symbol);
const INDICATORS: readonly { fn: string; query: string; meta: Record<string, number | string> }[] = [
  { fn: 'RSI', query: 'indicator=RSI&time_period=14', meta: { '5: Time Period': 14, '6: Series Type': 'close' } },
  { fn: 'MACD', query: 'indicator=MACD', meta: { '5.1: Fast Period': 12, '5.2: Slow Period': 26, '5.3: Signal Period': 9 } },
  { fn: 'BBANDS', query: 'indicator=BBANDS&time_period=20', meta: { '5: Time Period': 20, '7: Series Type': 'close' } },
  { fn: 'SMA', query: 'indicator=SMA&time_period=50', meta: { '5: Time Period': 50, '6: Series Type': 'close' } },
  { fn: 'EMA', query: 'indicator=EMA&time_period=20', meta: { '5: Time Period': 20, '6: Series Type': 'close' } },
];
const ROUND_SECONDS = 20;
const AV_PLAN = { perMinute: 5, perDay: 25, perSecond: 1 };
const YAHOO_PER_MINUTE = 60;
/** A Tuesday, 10:00 in New York: the first run's start. */
const ROUNDS_START = Date.parse('2026-11-17T15:00:00Z');
/** The next day, 09:25 to 16:00 in New York: the trading day. */
const DAY_START = Date.parse('2026-11-18T14:25:00Z');
const DAY_END = Date.parse('2026-11-18T21:00:00Z');
const ROUNDS_SCALE = 4;
const DAY_SCALE = Number(process.env.BENCH_DAY_SCALE ?? 100);

interface Tally {
  requests: number;
  real: number;
  bad: string[];
  /** endpoint -> X-Data-Source -> answers */
  sources: Record<string, Record<string, number>>;
}

interface Run {
  name: string;
  tally: Tally;
  /** Simulated ms at which each provider-A call arrived (likewise Yahoo's). */
  avCalls: number[];
  yahooCalls: number[];
  /** Simulated ms at which each round started. */
  roundStarts: number[];
  counters: Record<string, number>;
}

export default async function dashboardBench(): Promise<void> {
  console.log(
    `\ndashboard: ${SYMBOLS.length} symbols × (quote + ${INDICATORS.map((i) => i.fn).join(', ')} daily) every ${ROUND_SECONDS} s; provider A ${AV_PLAN.perDay}/day, ${AV_PLAN.perMinute}/minute, ${AV_PLAN.perSecond}/s; Yahoo ${YAHOO_PER_MINUTE}/minute; TECHNICAL_SOURCE=auto`,
  );
  const rounds = await run('4 rounds', ROUNDS_START, ROUNDS_START + 3 * ROUND_SECONDS * 1000, ROUNDS_SCALE);
  report(rounds, ROUNDS_SCALE);
  const firstRound = rounds.yahooCalls.filter((at) => at < (rounds.roundStarts[1] ?? Number.POSITIVE_INFINITY)).length;
  const perRound = rounds.roundStarts.map((start, i) => {
    const end = rounds.roundStarts[i + 1] ?? Number.POSITIVE_INFINITY;
    const y = rounds.yahooCalls.filter((at) => at >= start && at < end).length;
    const a = rounds.avCalls.filter((at) => at >= start && at < end).length;
    return `${y}/${a}`;
  });
  console.log(`  calls per round (Yahoo/provider A): ${perRound.join(', ')}`);
  verdicts([
    ['every answer real data', rounds.tally.real === rounds.tally.requests, `${rounds.tally.real}/${rounds.tally.requests}`],
    ['≤ 20 Yahoo calls in the first round', firstRound <= 20, String(firstRound)],
    [
      '≤ 25 provider-A calls, none over its limits',
      rounds.avCalls.length <= 25 && overLimits(rounds.avCalls, ROUNDS_SCALE) === 0,
      `${rounds.avCalls.length}, ${overLimits(rounds.avCalls, ROUNDS_SCALE)} over`,
    ],
  ]);

  const day = await run('trading day', DAY_START, DAY_END, DAY_SCALE);
  report(day, DAY_SCALE);
  const yahooPeak = maxInWindow(day.yahooCalls, 60_000);
  verdicts([
    [
      'provider A ≤ 25 calls, none over its limits',
      day.avCalls.length <= 25 && overLimits(day.avCalls, DAY_SCALE) === 0,
      `${day.avCalls.length}, ${overLimits(day.avCalls, DAY_SCALE)} over`,
    ],
    ['Yahoo within its budget (≤ 60 in any minute)', yahooPeak <= YAHOO_PER_MINUTE, `peak ${yahooPeak} in a minute`],
    ['100 % real answers', day.tally.real === day.tally.requests, `${day.tally.real}/${day.tally.requests}`],
  ]);

  await footprint();
}

async function run(name: string, startSim: number, lastRoundSim: number, scale: number): Promise<Run> {
  const wallStart = Date.now();
  const clock = () => startSim + (Date.now() - wallStart) * scale;
  const av = createAlphaVantageSimulator({
    validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey],
    callsPerMinute: AV_PLAN.perMinute,
    callsPerDay: AV_PLAN.perDay,
    burstPerSecond: AV_PLAN.perSecond,
    now: clock,
  });
  const yahoo = createYahooSimulator({ now: clock });
  await Promise.all([av.listen(), yahoo.listen()]);
  const avCalls: number[] = [];
  const yahooCalls: number[] = [];
  av.on('request', (event: { path: string }) => {
    if (event.path === '/query') avCalls.push(clock());
  });
  yahoo.on('request', (event: { path: string }) => {
    if (event.path.startsWith('/v8/finance/chart/')) yahooCalls.push(clock());
  });
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-dashboard-'));
  const { config, budgets } = scaledConfig(stateDir, av, yahoo, scale);
  const logger = pino({ level: 'silent' });
  const deps = await createDeps(config, logger, { budgets });
  const app = await buildApp(config, { logger, deps });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const pool = new Pool(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, { connections: 64 });
  const tally: Tally = { requests: 0, real: 0, bad: [], sources: {} };
  const roundStarts: number[] = [];
  try {
    for (let at = startSim; at <= lastRoundSim; at += ROUND_SECONDS * 1000) {
      const due = wallStart + (at - startSim) / scale;
      if (due > Date.now()) await sleep(due - Date.now());
      roundStarts.push(clock());
      await round(pool, tally);
    }
    return { name, tally, avCalls, yahooCalls, roundStarts, counters: { ...deps.bars?.counters } };
  } finally {
    await pool.close();
    await app.close();
    await Promise.all([av.close(), yahoo.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The service live against the simulators, every window scaled by `scale`. */
function scaledConfig(stateDir: string, av: SimulatedUpstream, yahoo: SimulatedUpstream, scale: number) {
  const config: Config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_MODE: 'live',
    BROKER: 'none',
    OVERVIEW_SOURCE: 'yahoo',
    QUOTE_FALLBACK: 'yahoo',
    TECHNICAL_SOURCE: 'auto',
    STATE_DIR: stateDir,
    METRICS_PORT: 'off',
    RATE_LIMIT_PER_MINUTE: '0',
    ALPHA_VANTAGE_URL: `${av.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    ALPHA_VANTAGE_CALLS_PER_MINUTE: String(AV_PLAN.perMinute),
    ALPHA_VANTAGE_CALLS_PER_DAY: String(AV_PLAN.perDay),
    YAHOO_URL: yahoo.origin,
    YAHOO_CALLS_PER_MINUTE: String(YAHOO_PER_MINUTE),
  });
  const scaled = (w: { freshMs: number; staleMs: number }) => ({ freshMs: w.freshMs / scale, staleMs: w.staleMs / scale });
  const windows = config.cache.windows;
  for (const name of ['QUOTE', 'TECHNICAL_DAILY', 'TECHNICAL_INTRADAY'] as const) windows[name] = scaled(windows[name]);
  const minuteMs = 60_000 / scale;
  const dayMs = 86_400_000 / scale;
  const budgets = {
    alphaVantage: {
      perMinute: AV_PLAN.perMinute,
      perDay: AV_PLAN.perDay,
      minIntervalMs: config.alphaVantage.minIntervalMs / scale,
      minuteMs,
      dayMs,
    },
    yahoo: { perMinute: YAHOO_PER_MINUTE, perDay: 0, minIntervalMs: 0, minuteMs, dayMs },
  };
  return { config, budgets };
}

/** One dashboard refresh: every symbol's quote and indicators at once. */
async function round(pool: Pool, tally: Tally): Promise<void> {
  const asks: Promise<void>[] = [];
  for (const symbol of SYMBOLS) {
    asks.push(ask(pool, tally, 'quote', `/api/provider-a/quote?symbol=${symbol}`, (body) => isQuote(body, symbol)));
    for (const indicator of INDICATORS) {
      const path = `/api/provider-a/technical?symbol=${symbol}&interval=daily&${indicator.query}`;
      asks.push(ask(pool, tally, 'technical', path, (body) => isIndicator(body, symbol, indicator)));
    }
  }
  await Promise.all(asks);
}

async function ask(pool: Pool, tally: Tally, endpoint: string, path: string, valid: (body: unknown) => boolean): Promise<void> {
  tally.requests += 1;
  try {
    const res = await pool.request({ method: 'GET', path });
    const text = await res.body.text();
    const body = res.statusCode === 200 ? (JSON.parse(text) as unknown) : undefined;
    if (res.statusCode !== 200 || !valid(body)) {
      if (tally.bad.length < 5) tally.bad.push(`${path}: ${res.statusCode} ${text.slice(0, 160)}`);
      return;
    }
    tally.real += 1;
    const source = String(res.headers['x-data-source'] ?? 'none');
    const bySource = tally.sources[endpoint] ?? {};
    bySource[source] = (bySource[source] ?? 0) + 1;
    tally.sources[endpoint] = bySource;
  } catch (error) {
    if (tally.bad.length < 5) tally.bad.push(`${path}: ${(error as Error).message}`);
  }
}

const DECIMAL4 = /^-?\d+\.\d{4}$/;

function isQuote(body: unknown, symbol: string): boolean {
  const quote = (body as { 'Global Quote'?: Record<string, string> })?.['Global Quote'];
  if (quote === undefined || Object.keys(quote).length !== QUOTE_FIELDS.length || quote['01. symbol'] !== symbol) return false;
  return (
    DECIMAL4.test(quote['05. price'] ?? '') &&
    DECIMAL4.test(quote['08. previous close'] ?? '') &&
    /^\d{4}-\d\d-\d\d$/.test(quote['07. latest trading day'] ?? '')
  );
}

function isIndicator(body: unknown, symbol: string, indicator: (typeof INDICATORS)[number]): boolean {
  const b = body as Record<string, Record<string, unknown>> | undefined;
  const meta = b?.['Meta Data'];
  const rows = b?.[sectionKey(indicator.fn)] as Record<string, Record<string, string>> | undefined;
  if (meta === undefined || rows === undefined) return false;
  if (meta['1: Symbol'] !== symbol || meta['2: Indicator'] !== indicatorSpec(indicator.fn)?.title || meta['4: Interval'] !== 'daily')
    return false;
  if (!Object.entries(indicator.meta).every(([key, value]) => meta[key] === value)) return false;
  const keys = Object.keys(rows);
  if (keys.length === 0 || keys.some((key, i) => i > 0 && key >= (keys[i - 1] as string))) return false;
  return Object.values(rows).every((row) => Object.values(row).length > 0 && Object.values(row).every((v) => DECIMAL4.test(v)));
}

function report(run: Run, scale: number): void {
  const { tally } = run;
  const minutes = (run.roundStarts.at(-1) ?? 0) - (run.roundStarts[0] ?? 0);
  console.log(
    `\n${run.name} (time ×${scale}, ${run.roundStarts.length} rounds over ${(minutes / 60_000).toFixed(1)} simulated minutes): ${tally.requests} answers, ${tally.real} real`,
  );
  console.log(
    `  calls: Yahoo ${run.yahooCalls.length}, provider A ${run.avCalls.length}; series refreshes: ${JSON.stringify(run.counters)}`,
  );
  for (const [endpoint, sources] of Object.entries(tally.sources)) console.log(`  ${endpoint}: ${JSON.stringify(sources)} (X-Data-Source)`);
  for (const line of tally.bad) console.log(`  not real: ${line}`);
}

function verdicts(targets: [string, boolean, string][]): void {
  for (const [target, met, figure] of targets) console.log(`  ${met ? 'met' : 'NOT met'}: ${target} (${figure})`);
}

/**
 * Provider-A calls over the plan, judged at arrival on the simulated clock: more than 5 in a minute or 25
 * in a day, or closer than a second (less 5 ms of arrival jitter, scaled: a wall millisecond is `scale`
 * simulated ones, so the tolerance is generous only where the clock is).
 */
function overLimits(calls: number[], scale: number): number {
  const sorted = [...calls].sort((a, b) => a - b);
  const spacing = sorted.slice(1).filter((at, i) => at - (sorted[i] as number) < 1_000 - 5 * scale).length;
  const minute = Math.max(0, maxInWindow(sorted, 60_000) - AV_PLAN.perMinute);
  const day = Math.max(0, sorted.length - AV_PLAN.perDay);
  return spacing + minute + day;
}

/** The most calls in any window of `windowMs` (simulated ms). */
function maxInWindow(calls: number[], windowMs: number): number {
  const sorted = [...calls].sort((a, b) => a - b);
  let best = 0;
  for (let end = 0, start = 0; end < sorted.length; end += 1) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** Bytes in the embedded store per series of one symbol, after every interval's indicator was asked once. */
async function footprint(): Promise<void> {
  const startSim = Date.parse('2026-11-18T18:00:00Z');
  const wallStart = Date.now();
  const clock = () => startSim + (Date.now() - wallStart);
  const av = createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey], now: clock });
  const yahoo = createYahooSimulator({ now: clock });
  await Promise.all([av.listen(), yahoo.listen()]);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-footprint-'));
  const { config, budgets } = scaledConfig(stateDir, av, yahoo, 1);
  const logger = pino({ level: 'silent' });
  const deps = await createDeps(config, logger, { budgets });
  const app = await buildApp(config, { logger, deps });
  try {
    const symbol = SYMBOLS[0] as string;
    for (const interval of INTERVALS) {
      const res = await app.inject({ method: 'GET', url: `/api/provider-a/technical?symbol=${symbol}&indicator=SMA&interval=${interval}` });
      if (res.statusCode !== 200) console.log(`  ${interval}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    const rows = deps.store.db
      ?.prepare("SELECT key, LENGTH(key) + LENGTH(value) AS bytes, value FROM cache_entries WHERE key LIKE '%:bars:%' ORDER BY key")
      .all() as { key: string; bytes: number; value: string }[];
    console.log(`\nstored bars of ${symbol} (embedded store, key and JSON value; a Redis entry holds the same JSON):`);
    for (const row of rows) {
      const series = JSON.parse(row.value) as { keys: string[] };
      const size = row.key.split(':bars:')[1]?.split(':')[0];
      console.log(`  ${size?.padEnd(4)} ${String(series.keys.length).padStart(5)} bars  ${(row.bytes / 1024).toFixed(1).padStart(6)} KiB`);
    }
  } finally {
    await app.close();
    await Promise.all([av.close(), yahoo.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await dashboardBench();
