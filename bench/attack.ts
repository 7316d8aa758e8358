// The shared budget under attack: one caller tries to take every provider call, another only wants its
// dashboard. The service runs in live mode against the Alpha Vantage simulator, on the free plan's real limits
// (5 calls a minute, 500 a day, 1 a second: the simulator answers Alpha Vantage's limit body past them), and the
// Yahoo chart simulator, with the production defaults (fair shares, BUDGET_RESERVE a quarter; the per-caller limit
// of 600 a minute; 20 streams per caller).
//
//  - The attacker, from 127.0.0.2: 20 streams (the per-caller cap), each on 10 symbols that do not exist, held
//    for the whole run, and meanwhile a flood of new symbols (valid ones the dashboard never asks, and junk) at
//    10 a second, its per-caller limit, for ATTACK seconds (120 by default; BENCH_ATTACK_SECONDS).
//  - The dashboard, from 127.0.0.3, ATTACK/6 seconds into the flood: six symbols it has not asked before, and the
//    market overview, asked again every 10 s (a page polling) until the flood ends.
//
// Printed per store (the embedded store; Redis with two replicas, the callers' requests spread over both): the
// attacker's and the dashboard's provider calls (from the budget ledgers, which put each call to its caller), the
// dashboard's answers by status and source, Alpha Vantage's calls per minute as they arrived at the simulator, and
// limit violations judged at arrival. Target: every dashboard answer 200 with real data, at least one from Alpha
// Vantage itself, the attacker at most three quarters of the calls, 0 violations.
//
// `npx tsx bench/attack.ts` (a part of `npm run bench`). Redis: REDIS_URL or redis://127.0.0.1:6379, under a
// random key prefix.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/core/config.js';
import { ALPHA_VANTAGE, YAHOO } from '../src/core/upstream-ids.js';
import { createDeps } from '../src/deps.js';
import { createAlphaVantageSimulator } from '../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { createYahooSimulator } from '../src/sandbox/yahoo/yahoo-simulator.js';
import { countingSimulator, type Limits, type Violations, violations } from './counted-calls.js';

const ATTACK_MS = Number(process.env.BENCH_ATTACK_SECONDS ?? 120) * 1_000;
const ATTACKER = '127.0.0.2';
const DASHBOARD = '127.0.0.3';
const FLOOD_PER_SECOND = 10;
const STREAMS = 20;
const JUNK_PER_STREAM = 10;
const STOCKS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);
const DASHBOARD_SYMBOLS = STOCKS.slice(10, 16);
/** The attacker's valid symbols: every stock but the dashboard's. */
const FLOOD_SYMBOLS = STOCKS.filter((s) => !DASHBOARD_SYMBOLS.includes(s));

interface Answer {
  path: string;
  status: number;
  source: string;
  cache: string;
  code: string | undefined;
  real: boolean;
}

interface Outcome {
  name: string;
  /** Provider calls by account, per provider, from the ledgers. */
  calls: Record<'alphaVantage' | 'yahoo', Record<string, number>>;
  dashboard: Answer[];
  attacker: { requests: number; byStatus: Record<string, number>; streamEvents: Record<string, number> };
  /** Alpha Vantage calls per minute of the run, at arrival. */
  perMinute: number[];
  violations: Violations;
}

export default async function attackBench(): Promise<void> {
  console.log(
    `\nattack: one caller (${ATTACKER}) holds ${STREAMS} streams of ${JUNK_PER_STREAM} unknown symbols and floods new symbols at ${FLOOD_PER_SECOND}/s for ${ATTACK_MS / 1000} s; a dashboard (${DASHBOARD}) asks ${DASHBOARD_SYMBOLS.length} new symbols and the overview every 10 s from ${ATTACK_MS / 6000} s; Alpha Vantage at 5/minute, 500/day, 1/s (live mode against the simulators, production defaults)`,
  );
  const results = [await run('embedded store', 1, {})];
  const prefix = `mdp-bench:${randomBytes(4).toString('hex')}:`;
  results.push(
    await run('Redis, two replicas', 2, { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: prefix }),
  );
  for (const outcome of results) print(outcome);
}

async function run(name: string, replicas: number, storeEnv: Record<string, string>): Promise<Outcome> {
  const av = await countingSimulator(createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey] }), '/query');
  const yahoo = await countingSimulator(createYahooSimulator(), undefined);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-attack-'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_MODE: 'live',
    BROKER: 'none',
    STATE_DIR: stateDir,
    ALPHA_VANTAGE_URL: `${av.upstream.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    YAHOO_URL: yahoo.upstream.origin,
    METRICS_PORT: 'off',
    ...storeEnv,
  });
  const logger = pino({ level: 'silent' });
  const apps: FastifyInstance[] = [];
  for (let i = 0; i < replicas; i += 1) {
    const app = await buildApp(config, { logger, deps: await createDeps(config, logger) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    apps.push(app);
  }
  const urls = apps.map((app) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  // Each caller from its own loopback address (undici's pools take no local address; Node's agents do).
  const callers = (address: string) =>
    urls.map((url) => ({ url, agent: new Agent({ keepAlive: true, maxSockets: 16, localAddress: address }) }));
  const attackerPools = callers(ATTACKER);
  const dashboardPools = callers(DASHBOARD);
  const startedAt = Date.now();
  try {
    const streams = await openJunkStreams(urls);
    const [attacker, dashboard] = await Promise.all([flood(attackerPools), watch(dashboardPools)]);
    for (const stream of streams.sockets) stream.destroy();
    const calls = {
      alphaVantage: await callsByAccount(apps[0] as FastifyInstance, ALPHA_VANTAGE),
      yahoo: await callsByAccount(apps[0] as FastifyInstance, YAHOO),
    };
    return {
      name,
      calls,
      dashboard,
      attacker: { ...attacker, streamEvents: streams.events },
      perMinute: perMinute(av.calls, startedAt),
      violations: violations(av.calls, FREE_PLAN, 5),
    };
  } finally {
    for (const { agent } of [...attackerPools, ...dashboardPools]) agent.destroy();
    for (const app of apps) await app.close();
    await Promise.all([av.upstream.close(), yahoo.upstream.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The attacker's streams: each on its own 10 unknown symbols, spread over the replicas. */
async function openJunkStreams(urls: string[]): Promise<{ sockets: IncomingMessage[]; events: Record<string, number> }> {
  const events: Record<string, number> = {};
  const sockets = await Promise.all(
    Array.from({ length: STREAMS }, async (_, i) => {
      const junk = Array.from({ length: JUNK_PER_STREAM }, (__, j) => `ZQJ${String(i * JUNK_PER_STREAM + j).padStart(3, '0')}`);
      const req = request(`${urls[i % urls.length]}/api/stream?quote=${junk.join(',')}`, {
        localAddress: ATTACKER,
        headers: { accept: 'text/event-stream' },
      });
      req.end();
      const res = await new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const match of chunk.matchAll(/^event: (\w+)$/gm)) events[match[1] as string] = (events[match[1] as string] ?? 0) + 1;
        for (const match of chunk.matchAll(/"code":"(\w+)"/g)) events[`error ${match[1]}`] = (events[`error ${match[1]}`] ?? 0) + 1;
      });
      res.on('error', () => {});
      return res;
    }),
  );
  return { sockets, events };
}

/** New symbols at the attacker's per-caller limit: valid ones (each a first look) and junk, in turn. */
async function flood(pools: Target[]): Promise<{ requests: number; byStatus: Record<string, number> }> {
  const byStatus: Record<string, number> = {};
  const started = Date.now();
  const pending = new Set<Promise<void>>();
  for (let i = 0; Date.now() - started < ATTACK_MS; i += 1) {
    const due = started + (i * 1_000) / FLOOD_PER_SECOND;
    if (due > Date.now()) await sleep(due - Date.now());
    const symbol = i % 2 === 0 ? (FLOOD_SYMBOLS[(i / 2) % FLOOD_SYMBOLS.length] as string) : `QZF${i}`;
    const one = ask(pools[i % pools.length] as Target, `/api/provider-a/quote?symbol=${symbol}`).then((answer) => {
      const key = answer.code === undefined ? String(answer.status) : `${answer.status} ${answer.code}`;
      byStatus[key] = (byStatus[key] ?? 0) + 1;
    });
    pending.add(one);
    void one.finally(() => pending.delete(one));
  }
  await Promise.all(pending);
  return { requests: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus };
}

/** The dashboard: its six symbols and the overview, every 10 s from a sixth of the way into the flood. */
async function watch(pools: Target[]): Promise<Answer[]> {
  await sleep(ATTACK_MS / 6);
  const answers: Answer[] = [];
  const until = Date.now() + (ATTACK_MS * 5) / 6;
  for (let round = 0; Date.now() < until; round += 1) {
    const next = Date.now() + 10_000;
    const pool = pools[round % pools.length] as Target;
    const paths = [...DASHBOARD_SYMBOLS.map((s) => `/api/provider-a/quote?symbol=${s}`), '/api/market/overview'];
    answers.push(...(await Promise.all(paths.map((path) => ask(pool, path)))));
    await sleep(Math.max(0, next - Date.now()));
  }
  return answers;
}

/** A replica's URL and the agent that reaches it from one caller's address. */
interface Target {
  url: string;
  agent: Agent;
}

function get(target: Target, path: string): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${target.url}${path}`, { agent: target.agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function ask(target: Target, path: string): Promise<Answer> {
  try {
    const res = await get(target, path);
    const body = JSON.parse(res.text) as Record<string, unknown> & { error?: { code: string } };
    const symbol = new URL(path, 'http://x').searchParams.get('symbol');
    const quote = body['Global Quote'] as Record<string, string> | undefined;
    const real = res.status === 200 && (symbol === null ? Object.keys(body).length > 0 : quote?.['01. symbol'] === symbol);
    return {
      path,
      status: res.status,
      source: String(res.headers['x-data-source'] ?? '-'),
      cache: String(res.headers['x-cache'] ?? '-'),
      code: body.error?.code,
      real,
    };
  } catch {
    return { path, status: 0, source: '-', cache: '-', code: 'NO_ANSWER', real: false };
  }
}

/** Calls in the provider's ledger by the account they were put to. */
async function callsByAccount(app: FastifyInstance, upstream: string): Promise<Record<string, number>> {
  const { store, scopes } = app.deps;
  const ledger = scopes.of(upstream);
  const accounts: string[] = [];
  if (store.shared !== undefined) {
    const { redis } = store.shared;
    const members = await redis.client.zrange(redis.key(`{budget:${ledger}}:calls`), '0', '-1');
    for (const member of members) accounts.push(member.slice(member.indexOf('|', member.indexOf('|') + 1) + 1));
  } else {
    const rows = store.db?.prepare('SELECT account FROM budget_calls WHERE name = ?').all(ledger) as { account: string }[];
    accounts.push(...rows.map((row) => row.account));
  }
  const byAccount: Record<string, number> = {};
  for (const account of accounts) byAccount[account] = (byAccount[account] ?? 0) + 1;
  return byAccount;
}

function perMinute(calls: number[], startedAt: number): number[] {
  const minutes: number[] = [];
  for (const at of calls) {
    const minute = Math.floor((at - startedAt) / 60_000);
    minutes[minute] = (minutes[minute] ?? 0) + 1;
  }
  return Array.from(minutes, (n) => n ?? 0);
}

/** The free plan's limits, judged at arrival: 5 calls in any 60 s, 500 in any day, 1 s apart. */
const FREE_PLAN: Limits = { minuteMs: 60_000, perMinute: 5, dayMs: 86_400_000, perDay: 500, spacingMs: 1_000 };

function print(outcome: Outcome): void {
  const share = (provider: 'alphaVantage' | 'yahoo') => {
    const calls = outcome.calls[provider];
    const total = Object.values(calls).reduce((a, b) => a + b, 0);
    const attacker = calls[ATTACKER] ?? 0;
    const dashboard = calls[DASHBOARD] ?? 0;
    const others = total - attacker - dashboard;
    return `${total} calls: attacker ${attacker} (${((100 * attacker) / Math.max(1, total)).toFixed(1)} %), dashboard ${dashboard}${others > 0 ? `, other ${others}` : ''}`;
  };
  const byOutcome: Record<string, number> = {};
  for (const a of outcome.dashboard) {
    const key = `${a.status}${a.code === undefined ? '' : ` ${a.code}`} ${a.path.includes('overview') ? 'overview' : a.source}${a.real ? '' : ' (not real)'}`;
    byOutcome[key] = (byOutcome[key] ?? 0) + 1;
  }
  const real = outcome.dashboard.filter((a) => a.real).length;
  const fromAv = outcome.dashboard.filter((a) => a.source === 'alpha-vantage').length;
  const v = outcome.violations;
  console.log(`\n${outcome.name}`);
  console.log(`  Alpha Vantage: ${share('alphaVantage')}`);
  console.log(`  Yahoo:         ${share('yahoo')}`);
  console.log(`  Alpha Vantage calls per minute, at arrival: ${outcome.perMinute.join(', ')}`);
  console.log(`  violations at arrival (minute/day/spacing): ${v.minute}/${v.day}/${v.spacing}`);
  console.log(
    `  dashboard: ${outcome.dashboard.length} answers, ${real} real, ${fromAv} from Alpha Vantage itself; ${JSON.stringify(byOutcome)}`,
  );
  console.log(
    `  attacker: ${outcome.attacker.requests} flood requests ${JSON.stringify(outcome.attacker.byStatus)}; stream events ${JSON.stringify(outcome.attacker.streamEvents)}`,
  );
  const attackerAv = outcome.calls.alphaVantage[ATTACKER] ?? 0;
  const totalAv = Object.values(outcome.calls.alphaVantage).reduce((a, b) => a + b, 0);
  const met = real === outcome.dashboard.length && fromAv > 0 && attackerAv <= 0.75 * totalAv && v.minute + v.day + v.spacing === 0;
  console.log(
    `  target (every dashboard answer real, one from Alpha Vantage, the attacker ≤ 3/4 of Alpha Vantage's calls, 0 violations): ${met ? 'met' : 'NOT met'}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await attackBench();
