// Variants of one drop-in request, as an attacker sent them (issue 41): a spelling that means the same request is
// the same cache entry and costs no second upstream call; a value holding an invisible character is a 400 naming
// the parameter and the character, at no cost. Over real HTTP, counting every simulator's requests, on a
// function the service forwards (its values once went upstream as sent) and on one it answers itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** About what requests cost, not the budget's pacing: no budget to wait on, provider A alone. */
const ENV = { ...UNCAPPED, ...NO_FALLBACK };

const QUERY = '/api/provider-a/query';

/** Every request any simulator received (Alpha Vantage, Yahoo, Massive and the brokers). */
const upstreamCalls = ({ sandbox }: RunningApp) => sandbox.all().reduce((sum, upstream) => sum + upstream.count(), 0);

/** The canonical request, then its variant: the variant is a cache hit on the same body, and no call more. */
async function assertOneEntry(running: RunningApp, canonical: string, variant: string): Promise<void> {
  const first = await running.get(`${QUERY}?${canonical}`);
  assert.equal(first.status, 200, `${canonical}: ${first.text.slice(0, 200)}`);
  const calls = upstreamCalls(running);
  const again = await running.get(`${QUERY}?${variant}`);
  assert.equal(again.status, 200, `${variant}: ${again.text.slice(0, 200)}`);
  assert.equal(again.headers['x-cache'], 'HIT', variant);
  assert.deepEqual(again.body, first.body, variant);
  assert.equal(upstreamCalls(running), calls, `${variant} cost an upstream call`);
}

for (const interval of ['MONTHLY', 'Monthly', 'monthly%20']) {
  test(`interval=${interval} is interval=monthly: one entry, one upstream call (forwarded WTI, the service's SMA)`, async (t) => {
    const running = await startApp(t, { env: ENV, transport: 'socket' });
    await assertOneEntry(running, 'function=WTI&interval=monthly', `function=WTI&interval=${interval}`);
    const sma = 'function=SMA&symbol=IBM&time_period=10&series_type=close';
    await assertOneEntry(running, `${sma}&interval=monthly`, `${sma}&interval=${interval}`);
    assert.equal(upstreamCalls(running), 2, 'one call for each of the two requests');
  });
}

for (const symbol of ['IBM%20', '%20IBM']) {
  test(`symbol=${symbol} is symbol=IBM: one entry, one upstream call (forwarded OVERVIEW, the service's GLOBAL_QUOTE)`, async (t) => {
    const running = await startApp(t, { env: ENV, transport: 'socket' });
    await assertOneEntry(running, 'function=OVERVIEW&symbol=IBM', `function=OVERVIEW&symbol=${symbol}`);
    await assertOneEntry(running, 'function=GLOBAL_QUOTE&symbol=IBM', `function=GLOBAL_QUOTE&symbol=${symbol}`);
    assert.equal(upstreamCalls(running), 2, 'one call for each of the two requests');
  });
}

for (const [symbol, named] of [
  ['%C2%A0IBM', 'U+00A0 (a no-break space)'],
  ['%E2%80%AEIBM', 'U+202E (a text direction control)'],
] as const) {
  test(`symbol=${symbol} is a 400 naming symbol and ${named.split(' ')[0]}, with no upstream call`, async (t) => {
    const running = await startApp(t, { env: ENV, transport: 'socket' });
    for (const fn of ['OVERVIEW', 'GLOBAL_QUOTE', 'TIME_SERIES_DAILY']) {
      const res = await running.get(`${QUERY}?function=${fn}&symbol=${symbol}`);
      assert.equal(res.status, 400, `${fn}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.error.code, 'INVALID_PARAMETER');
      assert.equal(res.body.error.message, `symbol contains ${named}, which has no place in a value`);
      assert.equal(res.body['Error Message'], res.body.error.message, "Alpha Vantage's own key, so its clients report an error");
    }
    assert.equal(upstreamCalls(running), 0);
  });
}
