// MCP tool calls on a cache hit against the REST route they read, in the same run on this machine: POST /mcp
// `tools/call get_quotes ["IBM"]` (a stateless request: the JSON-RPC message, the SDK's server and transport, the
// arguments' validation, the tool, the sizing and the JSON answer) against GET /api/provider-a/quote?symbol=IBM
// (which the fast path answers), both from the same cache entry, in alternating rounds (BENCH_ROUNDS of
// BENCH_SECONDS, default 6 of 2 s): the median ratio of throughput (target ≥ 0.5) and each one's CPU per request.
// Beside them, GET /api/system/live: Fastify's pipeline for a route that does nothing, the floor of any request
// the fast path cannot replay (a POST never is). Then the bytes of a typical answer of each tool, and of
// tools/list: what an agent's context pays for each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { type Figures, measure, median, row } from './autocannon-run.js';
import { cpuMicros } from './cache-hit.js';
import { type Child, startService } from './processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const TARGET = 0.5;

const REST = '/api/provider-a/quote?symbol=IBM';
const FLOOR = '/api/system/live';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const call = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const TOOL_CALL = call('get_quotes', { symbols: ['IBM'] });

/** A typical call of each tool: its defaults, a few symbols. */
const TYPICAL: [string, Record<string, unknown>][] = [
  ['get_quotes', { symbols: ['IBM', 'MSFT', 'AAPL'] }],
  ['get_price_history', { symbol: 'IBM' }],
  ['get_indicator', { symbol: 'IBM', indicator: 'RSI' }],
  ['search_symbols', { keywords: 'micro' }],
  ['get_dividends', { symbol: 'AAPL' }],
  ['get_market_overview', {}],
  ['alpha_vantage', { function: 'OVERVIEW', parameters: { symbol: 'IBM' } }],
  ['get_service_status', {}],
  ['get_broker_health', {}],
  ['get_broker_accounts', {}],
  ['get_broker_positions', {}],
  ['get_broker_quotes', { symbols: ['AAPL', 'MSFT', 'SPY'] }],
];

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await request(`${url}/mcp`, { method: 'POST', headers: HEADERS, body });
  return { status: res.statusCode, text: await res.body.text() };
}

interface Round extends Figures {
  cpuMicros: number;
}

async function timed(service: Child, options: Parameters<typeof measure>[1], path: string): Promise<Round> {
  const before = cpuMicros(service);
  const figures = await measure(service.url + path, { duration: ROUND_SECONDS, ...options });
  return { ...figures, cpuMicros: (cpuMicros(service) - before) / (figures.requestsPerSecond * ROUND_SECONDS) };
}

export default async function mcpBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-'));
  // No budget, pacing or per-caller limit: the sizes below are answers, not refusals.
  const service = await startService({
    STATE_DIR: stateDir,
    RATE_LIMIT_PER_MINUTE: '0',
    CACHE_QUOTE_FRESH_SECONDS: '3600',
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '0',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    MASSIVE_CALLS_PER_MINUTE: '0',
    YAHOO_CALLS_PER_MINUTE: '0',
  });
  try {
    const warm = await post(service.url, TOOL_CALL);
    if (warm.status !== 200 || warm.text.includes('"isError":true')) throw new Error(`warm-up failed: ${warm.status} ${warm.text}`);
    await request(service.url + REST).then((res) => res.body.dump());
    const tool = { method: 'POST' as const, headers: HEADERS, body: TOOL_CALL };
    // JIT warm-up for each, not reported.
    await measure(service.url + REST, { duration: 2 });
    await measure(`${service.url}/mcp`, { duration: 2, ...tool });
    await measure(service.url + FLOOR, { duration: 2 });
    const rounds: [Round, Round, Round][] = [];
    for (let i = 0; i < ROUNDS; i += 1)
      rounds.push([await timed(service, {}, REST), await timed(service, {}, FLOOR), await timed(service, tool, '/mcp')]);
    console.log(
      `\nMCP tool call on a cache hit against its REST route, 50 connections, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s`,
    );
    rounds.forEach(([rest, floor, mcp], i) => {
      console.log(row(`round ${i + 1} GET quote (REST)`, rest));
      console.log(row(`round ${i + 1} GET live (pipeline)`, floor));
      console.log(row(`round ${i + 1} get_quotes (MCP)`, mcp));
    });
    const ratio = median(rounds.map(([rest, , mcp]) => mcp.requestsPerSecond / rest.requestsPerSecond));
    const floorRatio = median(rounds.map(([, floor, mcp]) => mcp.requestsPerSecond / floor.requestsPerSecond));
    const cpu = (i: number) => median(rounds.map((r) => (r[i] as Round).cpuMicros)).toFixed(1);
    console.log(
      `median ratio MCP/REST ${ratio.toFixed(2)}, target ≥ ${TARGET}: ${ratio >= TARGET ? 'met' : 'NOT met'}; MCP/pipeline floor ${floorRatio.toFixed(2)}`,
    );
    console.log(`CPU per request: MCP ${cpu(2)} µs, REST ${cpu(0)} µs, pipeline floor ${cpu(1)} µs`);

    console.log('\nbytes of a typical answer (the JSON-RPC response body)');
    const list = await post(service.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    console.log(`| ${'tools/list'.padEnd(22)} | ${String(Buffer.byteLength(list.text)).padStart(6)} |`);
    for (const [name, args] of TYPICAL) {
      const answer = await post(service.url, call(name, args));
      const note = answer.text.includes('"isError":true') ? ' (an error)' : answer.text.includes('"truncated"') ? ' (cut)' : '';
      console.log(`| ${name.padEnd(22)} | ${String(Buffer.byteLength(answer.text)).padStart(6)} |${note}`);
    }
  } finally {
    await service.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await mcpBench();
