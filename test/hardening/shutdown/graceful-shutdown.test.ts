// SIGTERM under load on the real entry point (src/server.ts): requests in flight are answered in full,
// new connections are refused, the embedded store is closed cleanly (SQLite checkpoints and removes its
// WAL only on a clean close), the process exits 0; a restart on the same STATE_DIR still has the budget
// ledger and the last good values. The upstream is a standalone Alpha Vantage simulator made slow with
// its latency switch, so the requests are provably in flight when the signal arrives.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, request } from 'undici';
import { createAlphaVantageSimulator } from '../../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { tempDir } from '../../helpers/config.js';
import { startServer } from './server-process.js';
import { refused, until } from './waits.js';

const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'JPM', 'KO'];
const UPSTREAM_LATENCY_MS = 4_000;

interface Answer {
  status: number;
  cache: string | undefined;
  age: number | undefined;
  body: string;
}

/** One request on its own connection, so closing idle connections cannot touch the others. */
async function askAlone(origin: string, path: string): Promise<Answer> {
  const client = new Client(origin, { pipelining: 1 });
  try {
    const res = await client.request({ method: 'GET', path });
    const body = await res.body.text();
    const age = res.headers.age;
    return {
      status: res.statusCode,
      cache: res.headers['x-cache'] as string | undefined,
      age: age === undefined ? undefined : Number(age),
      body,
    };
  } finally {
    await client.close();
  }
}

test('SIGTERM drains in-flight requests, refuses new connections, closes the store; a restart keeps the ledger and last good values', async (t) => {
  const sim = createAlphaVantageSimulator({
    validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey],
    callsPerMinute: 0,
    callsPerDay: 0,
    burstPerSecond: 0,
  });
  await sim.listen();
  t.after(() => sim.close());
  const stateDir = tempDir(t);
  const env = {
    DATA_MODE: 'live',
    ALPHA_VANTAGE_URL: `${sim.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '100',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    CACHE_QUOTE_FRESH_SECONDS: '1',
    RATE_LIMIT_PER_MINUTE: '0',
    BROKER: 'none',
    OVERVIEW_SOURCE: 'none',
    STATE_DIR: stateDir,
  };

  const first = await startServer(t, env);
  sim.setFaults({ latencyMs: UPSTREAM_LATENCY_MS, fault: null });
  const settled = new Set<string>();
  const inFlight = SYMBOLS.map((symbol) =>
    askAlone(first.url, `/api/provider-a/quote?symbol=${symbol}`).finally(() => settled.add(symbol)),
  );
  // Every request has reached the upstream (counted on arrival, answered after the latency).
  await until(() => sim.count('/query') === SYMBOLS.length, 'the upstream calls to arrive');

  first.child.kill('SIGTERM');
  await until(() => refused(first.port), 'new connections to be refused');
  assert.equal(settled.size, 0, 'the listener closed while every request was still in flight');

  const answers = await Promise.all(inFlight);
  for (const [i, answer] of answers.entries()) {
    assert.equal(answer.status, 200, `${SYMBOLS[i]}: ${answer.body}`);
    const quote = (JSON.parse(answer.body) as { 'Global Quote': Record<string, string> })['Global Quote'];
    assert.equal(quote['01. symbol'], SYMBOLS[i], 'the whole body arrived');
  }
  assert.equal(await first.exited, 0);
  assert.ok(
    first.logs.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'),
    'the shutdown is logged',
  );
  assert.ok(!first.logs.some((l) => typeof l.level === 'number' && l.level >= 50), 'nothing logged at error level');
  assert.deepEqual(first.stderr, []);
  // SQLite folds the WAL back and deletes it only when the last connection closes cleanly.
  assert.ok(existsSync(join(stateDir, 'state.db')));
  assert.ok(!existsSync(join(stateDir, 'state.db-wal')), `files left: ${readdirSync(stateDir).join(', ')}`);

  // Restart on the same state with the upstream gone.
  sim.clearFaults();
  await sim.close();
  const second = await startServer(t, env);
  const status = await request(`${second.url}/api/system/status`);
  const body = (await status.body.json()) as { upstreams: { id: string; budget: { usedDay: number; leftDay: number } | null }[] };
  const budget = body.upstreams.find((u) => u.id === 'provider-a')?.budget;
  assert.equal(budget?.usedDay, SYMBOLS.length, 'the day count survived the restart');
  assert.equal(budget?.leftDay, 100 - SYMBOLS.length);

  await sleep(1_000); // past the 1 s fresh window, so the answer must come from the stored last good value
  for (const [i, symbol] of SYMBOLS.entries()) {
    const again = await askAlone(second.url, `/api/provider-a/quote?symbol=${symbol}`);
    assert.equal(again.status, 200, again.body);
    assert.equal(again.cache, 'STALE');
    assert.ok(again.age !== undefined && again.age >= 1, `Age ${again.age}`);
    assert.deepEqual(JSON.parse(again.body), JSON.parse(answers[i]!.body), 'the very value served before the restart');
  }

  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});
