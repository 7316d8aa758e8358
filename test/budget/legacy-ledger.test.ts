// A live deployment upgraded in the middle of a day, from the version whose budget ledgers had the bare
// upstream name (`alphaVantage`) to scoped ledgers (`live:alphaVantage@<hash>`): the calls the old version
// recorded within the day window still count, in the embedded store (a real SQLite file) and in Redis (a
// real prefix), written exactly as the old version wrote them. Old rows past the day window are pruned.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { BudgetExhaustedError } from '../../src/core/errors.js';
import { loadConfig } from '../../src/core/config.js';
import { createDeps } from '../../src/deps.js';
import { openStateDatabase } from '../../src/store/state-database.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from '../store/redis-helper.js';

const HOUR_MS = 3_600_000;
const LIMITS = { perMinute: 0, perDay: 5, minIntervalMs: 0 };
const LEGACY = 'alphaVantage';

interface OldVersion {
  env: Record<string, string>;
  /** Records calls (and a back-off) under the bare name, as the version before scoped ledgers did. */
  record(calls: number[], backoffUntil?: number): Promise<void>;
  /** Legacy calls still stored at or before `at`. */
  storedUpTo(at: number): Promise<number>;
}

function embedded(t: TestContext): OldVersion {
  const dir = tempDir(t);
  const withDb = <T>(work: (db: ReturnType<typeof openStateDatabase>) => T): T => {
    const db = openStateDatabase(dir);
    try {
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    env: { STATE_DIR: dir },
    record: async (calls, backoffUntil) =>
      withDb((db) => {
        for (const at of calls) db.prepare('INSERT INTO budget_calls (name, at) VALUES (?, ?)').run(LEGACY, at);
        if (backoffUntil !== undefined) db.prepare('INSERT INTO budget_backoff (name, until) VALUES (?, ?)').run(LEGACY, backoffUntil);
      }),
    storedUpTo: async (at) =>
      withDb((db) => (db.prepare('SELECT COUNT(*) AS n FROM budget_calls WHERE name = ? AND at <= ?').get(LEGACY, at) as { n: number }).n),
  };
}

function redis(t: TestContext): OldVersion {
  const prefix = redisPrefix(t);
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.after(() => client.disconnect());
  const calls = `${prefix}budget:${LEGACY}:calls`;
  return {
    env: { REDIS_URL, REDIS_KEY_PREFIX: prefix, STATE_DIR: tempDir(t) },
    record: async (at, backoffUntil) => {
      for (const [i, score] of at.entries()) await client.zadd(calls, score, `${score}:old${i}`);
      await client.pexpire(calls, 24 * HOUR_MS + 60_000);
      if (backoffUntil !== undefined) await client.set(`${prefix}budget:${LEGACY}:backoff`, backoffUntil, 'PX', backoffUntil - Date.now());
    },
    storedUpTo: async (at) => client.zcount(calls, '-inf', at),
  };
}

for (const [store, oldVersion] of [
  ['embedded', embedded],
  ['redis', redis],
] as const) {
  test(`${store}: a live guard counts the calls recorded under the bare provider name within the day window`, async (t) => {
    const old = oldVersion(t);
    const open = async (env: Record<string, string>) => {
      const deps = await createDeps(loadConfig({ LOG_LEVEL: 'silent', ...old.env, ...env }), pino({ level: 'silent' }), {
        budgets: { alphaVantage: LIMITS },
      });
      t.after(() => deps.close());
      return deps.budgets.get(LEGACY, LIMITS);
    };
    const now = Date.now();
    await old.record([now - 26 * HOUR_MS, now - 3 * HOUR_MS, now - 2 * HOUR_MS, now - HOUR_MS]);

    const sandbox = await open({ DATA_MODE: 'sandbox' });
    assert.equal((await sandbox.snapshot()).usedDay, 0, 'only live mode takes the legacy calls on');

    const live = await open({ DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-a' });
    assert.equal((await live.snapshot()).usedDay, 3, 'the three calls of the last 24 hours count; the one of yesterday does not');
    await live.acquire();
    await live.acquire();
    await assert.rejects(live.acquire(), BudgetExhaustedError, 'five calls in 24 hours, three of them before the upgrade');
    assert.equal(await old.storedUpTo(now - 25 * HOUR_MS), 0, 'legacy calls past the day window are pruned');

    // A replica of the old version still running (a rolling upgrade): its new call and back-off count too.
    await old.record([Date.now()], Date.now() + 60_000);
    const restarted = await open({ DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-a' });
    const snapshot = await restarted.snapshot();
    assert.equal(snapshot.usedDay, 6, 'each legacy call counted once, after a restart too');
    assert.notEqual(snapshot.backedOffUntil, null, 'the legacy back-off holds');
  });
}
