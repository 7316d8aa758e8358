// A caller's bad input never counts as an upstream failure: for every route family, many bad requests
// (unknown symbols the upstream itself refuses, invalid parameters, forged cursors), then no circuit has
// opened or counted a failure, no upstream shows a last error, and the status is still "ok".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { assertNoUpstreamBlamed } from '../../helpers/upstream-blame.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

/** Valid syntax, unknown to every simulated upstream: these reach the upstream and come back refused. */
const UNKNOWN = Array.from({ length: 12 }, (_, i) => `ZQX${String.fromCharCode(65 + i)}`);

async function expectAll(running: RunningApp, paths: string[], statuses: number[]): Promise<void> {
  for (const path of paths) {
    const res = await running.get(path);
    assert.ok(statuses.includes(res.status), `${path}: ${res.status} ${res.text}`);
  }
}

test('provider A: unknown symbols and invalid parameters blame no upstream', async (t) => {
  const running = await startApp(t, { env: ANSWERS_ENV });
  await expectAll(
    running,
    UNKNOWN.map((s) => `/api/provider-a/quote?symbol=${s}`),
    [404],
  );
  await expectAll(
    running,
    UNKNOWN.map((s) => `/api/provider-a/technical?symbol=${s}&indicator=RSI&interval=daily`),
    [404],
  );
  const invalid = [
    'quote?symbol=',
    'quote?symbol=A%20B',
    'quote',
    'technical?symbol=IBM&indicator=NOPE',
    'technical?symbol=IBM&interval=2min',
    'technical?symbol=IBM&indicator=RSI&time_period=1e2',
  ];
  await expectAll(
    running,
    invalid.flatMap((q) => Array.from({ length: 3 }, () => `/api/provider-a/${q}`)),
    [400],
  );
  assert.ok(running.sandbox.alphaVantage.count() >= UNKNOWN.length, 'the unknown symbols did reach the upstream');
  await assertNoUpstreamBlamed(running);
  assert.equal((await running.get('/api/provider-a/quote?symbol=IBM')).status, 200);
});

test('provider B: unknown symbols, bad limits and invalid cursors blame no upstream', async (t) => {
  const running = await startApp(t, { env: ANSWERS_ENV });
  await expectAll(
    running,
    UNKNOWN.map((s) => `/api/provider-b/dividends?symbol=${s}`),
    [200],
  );
  const cursor = 'A'.repeat(60);
  const invalid = ['limit=0', 'limit=abc', `cursor=${cursor}`, `symbol=KO&cursor=${cursor}`, 'cursor=x'];
  await expectAll(
    running,
    invalid.flatMap((q) => Array.from({ length: 4 }, () => `/api/provider-b/dividends?${q}`)),
    [400],
  );
  await assertNoUpstreamBlamed(running);
});

for (const broker of ['ibkr', 'tastytrade']) {
  test(`broker (${broker}): unknown symbols, too many symbols and bad syntax blame no upstream`, async (t) => {
    const running = await startApp(t, { env: { ...ANSWERS_ENV, BROKER: broker } });
    for (let i = 0; i < UNKNOWN.length; i += 3) {
      const res = await running.get(`/api/broker/quotes?symbols=${UNKNOWN.slice(i, i + 3).join(',')}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.missing, UNKNOWN.slice(i, i + 3));
    }
    const many = Array.from({ length: 60 }, (_, i) => `S${i}`).join(',');
    await expectAll(
      running,
      ['symbols=', 'symbols=A%20B', `symbols=${many}`, 'symbols=,,,'].map((q) => `/api/broker/quotes?${q}`),
      [400],
    );
    await assertNoUpstreamBlamed(running);
  });
}

test('market overview and system status: junk parameters blame no upstream', async (t) => {
  const running = await startApp(t, { env: ANSWERS_ENV });
  await expectAll(running, ['/api/market/overview?symbol=ZZZZ', '/api/market/overview?x=%00', '/api/system/status?verbose=1'], [200, 400]);
  await expectAll(running, ['/api/market/nope', '/api/system/nope', '/api/provider-a/nope'], [404]);
  await assertNoUpstreamBlamed(running);
});
