import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MassiveSimulator } from '../../../src/sandbox/massive/massive-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { until } from '../../hardening/shutdown/waits.js';

const PATH = '/v3/reference/dividends';

/** Nothing upstream-specific may leak: its address, its paging link, its key. */
function assertNoLeak(running: RunningApp, res: TestResponse, key: string = SANDBOX_CREDENTIALS.massiveKey): void {
  const upstream = new URL(running.sandbox.massive.origin);
  for (const text of [res.text, JSON.stringify(res.headers)]) {
    assert.ok(!text.includes(upstream.host), 'upstream host in response');
    assert.ok(!text.includes('next_url'), 'next_url in response');
    assert.ok(!text.includes(key), 'API key in response');
    assert.ok(!text.includes('request_id'), 'upstream request id in response');
  }
}

describe('GET /api/provider-b/dividends', () => {
  it('filters by the upper-cased symbol, newest ex-dividend date first, and caches the page', async (t) => {
    const running = await startApp(t);
    const res = await running.get('/api/provider-b/dividends?symbol=aapl&limit=5');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-cache'], 'MISS');
    const expected = running.sandbox.massive.records().filter((r) => r.ticker === 'AAPL');
    assert.ok(expected.length > 5);
    assert.deepEqual(res.body.results, expected.slice(0, 5));
    assert.equal(res.body.count, 5);
    assert.match(res.body.next, /^\/api\/provider-b\/dividends\?symbol=AAPL&limit=5&cursor=[\w-]+$/);
    assertNoLeak(running, res);

    const again = await running.get('/api/provider-b/dividends?symbol=AAPL&limit=5');
    assert.equal(again.headers['x-cache'], 'HIT');
    assert.equal(again.text, res.text);
    assert.equal(running.sandbox.massive.count(PATH), 1);
  });

  it('lists all stocks without a symbol, 100 per page by default, newest first', async (t) => {
    const running = await startApp(t);
    const res = await running.get('/api/provider-b/dividends');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.count, 100);
    assert.deepEqual(res.body.results, running.sandbox.massive.records().slice(0, 100));
    const dates = res.body.results.map((r: { ex_dividend_date: string }) => r.ex_dividend_date);
    assert.deepEqual(dates, [...dates].sort().reverse());
    assert.ok(new Set(res.body.results.map((r: { ticker: string }) => r.ticker)).size > 10);
    assert.match(res.body.next, /^\/api\/provider-b\/dividends\?limit=100&cursor=/);
    for (const field of [
      'ticker',
      'cash_amount',
      'currency',
      'declaration_date',
      'ex_dividend_date',
      'pay_date',
      'record_date',
      'frequency',
      'dividend_type',
    ]) {
      assert.ok(field in res.body.results[0], field);
    }
  });

  it('pages through every record by following "next", with nothing upstream in any response', async (t) => {
    const running = await startApp(t);
    const expected = running.sandbox.massive.records().filter((r) => r.ticker === 'KO');
    const seen: unknown[] = [];
    let next: string | null = '/api/provider-b/dividends?symbol=ko&limit=4';
    let pages = 0;
    while (next !== null) {
      const res = await running.get(next);
      assert.equal(res.status, 200, res.text);
      assertNoLeak(running, res);
      seen.push(...res.body.results);
      next = res.body.next;
      pages += 1;
      assert.ok(pages < 50);
    }
    assert.deepEqual(seen, expected);
    assert.equal(pages, Math.max(1, Math.ceil(expected.length / 4)));
    assert.equal(running.sandbox.massive.count(PATH), pages);
  });

  it('refuses a tampered cursor and a cursor reused for another symbol or limit', async (t) => {
    const running = await startApp(t);
    const first = await running.get('/api/provider-b/dividends?symbol=KO&limit=2');
    const cursor = new URL(first.body.next, 'http://x').searchParams.get('cursor') as string;
    const cases = [
      `/api/provider-b/dividends?cursor=${cursor.slice(0, -3)}`,
      `/api/provider-b/dividends?symbol=PEP&limit=2&cursor=${cursor}`,
      `/api/provider-b/dividends?symbol=KO&limit=3&cursor=${cursor}`,
      '/api/provider-b/dividends?cursor=aHR0cDovL2V2aWwuZXhhbXBsZS8',
      '/api/provider-b/dividends?cursor=a%2Fb',
    ];
    for (const path of cases) {
      const res = await running.get(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.code, 'INVALID_PARAMETER', path);
    }
    // The cursor alone is enough: symbol and limit come with it.
    const alone = await running.get(`/api/provider-b/dividends?cursor=${cursor}`);
    assert.equal(alone.status, 200);
    assert.ok(alone.body.results.every((r: { ticker: string }) => r.ticker === 'KO'));
  });

  it('answers 200 with an empty list for a symbol without dividends', async (t) => {
    const running = await startApp(t);
    for (const symbol of ['AMZN', 'ZZZZ']) {
      const res = await running.get(`/api/provider-b/dividends?symbol=${symbol}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { results: [], count: 0, next: null });
    }
  });

  it('validates limit and symbol', async (t) => {
    const running = await startApp(t);
    for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'symbol=AA%20PL', 'symbol=']) {
      const res = await running.get(`/api/provider-b/dividends?${query}`);
      assert.equal(res.status, 400, query);
      assert.match(res.body.error.code, /^(INVALID|MISSING)_PARAMETER$/, query);
    }
    assert.equal(running.sandbox.massive.count(PATH), 0);
  });

  it('turns a rejected key (401) into 502 naming the cause, never the key', async (t) => {
    const badKey = 'not-a-valid-massive-key-123';
    const running = await startApp(t, { configure: (c) => ({ ...c, massive: { ...c.massive, apiKey: badKey } }) });
    const res = await running.get('/api/provider-b/dividends?symbol=AAPL');
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'UPSTREAM_ERROR');
    assert.match(res.body.error.message, /API key is unknown or revoked.*MASSIVE_API_KEY/);
    assertNoLeak(running, res, badKey);
    // Errors are not cached: the next call asks again.
    await running.get('/api/provider-b/dividends?symbol=AAPL');
    assert.equal(running.sandbox.massive.count(PATH), 2);
  });

  it('turns a plan without dividend data (403) into 502 naming the plan', async (t) => {
    const planKey = 'starter-plan-key';
    const sim = new MassiveSimulator({ validKeys: [], unentitledKeys: [planKey] });
    await sim.listen();
    t.after(() => sim.close());
    const running = await startApp(t, { configure: (c) => ({ ...c, massive: { ...c.massive, url: sim.origin, apiKey: planKey } }) });
    const res = await running.get('/api/provider-b/dividends');
    assert.equal(res.status, 502);
    assert.match(res.body.error.message, /plan .* does not include dividend data/);
    assert.ok(!res.text.includes(planKey));
    assert.equal(sim.count(PATH), 1);
  });

  it('sends the key as apiKey from then on when the server ignores the bearer header', async (t) => {
    const sim = new MassiveSimulator({ validKeys: ['query-only-key'], acceptBearer: false });
    await sim.listen();
    t.after(() => sim.close());
    const running = await startApp(t, {
      configure: (c) => ({ ...c, massive: { ...c.massive, url: sim.origin, apiKey: 'query-only-key' } }),
    });
    const first = await running.get('/api/provider-b/dividends?symbol=KO&limit=2');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.count, 2);
    assert.equal(sim.count(PATH), 2, 'one refused try with the header, one with apiKey');
    const second = await running.get('/api/provider-b/dividends?symbol=PEP&limit=2');
    assert.equal(second.status, 200);
    assert.equal(sim.count(PATH), 3);
    assert.ok(!first.text.includes('query-only-key') && !second.text.includes('query-only-key'));
  });

  it('on 429 serves stale data when it has some, else 429 QUOTA_EXHAUSTED with Retry-After', async (t) => {
    const running = await startApp(t, { env: { CACHE_DIVIDENDS_FRESH_SECONDS: '0' } });
    const first = await running.get('/api/provider-b/dividends?symbol=KO&limit=3');
    assert.equal(first.status, 200);
    running.sandbox.massive.setPerMinute(1);
    // Fills the simulator's one call a minute, so the next upstream call gets the real 429 body.
    await fetch(`${running.sandbox.massive.origin}${PATH}?apiKey=${SANDBOX_CREDENTIALS.massiveKey}`);

    const refreshed = new Promise((resolve) => running.sandbox.massive.once('request', resolve));
    const stale = await running.get('/api/provider-b/dividends?symbol=KO&limit=3');
    assert.equal(stale.status, 200);
    assert.equal(stale.headers['x-cache'], 'STALE');
    assert.deepEqual(stale.body, first.body);
    await refreshed; // the background refresh met the 429...
    // ...and the guard backs off as soon as the client has read it.
    await until(
      async () =>
        (await running.app.deps.budgets.get('massive', { perMinute: 0, perDay: 0, minIntervalMs: 0 }).snapshot()).backedOffUntil !== null,
      'the back-off',
    );

    const refused = await running.get('/api/provider-b/dividends?symbol=PEP');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter > 50 && retryAfter <= 60, String(retryAfter));
    // The guard backed off: the refused call was not even sent.
    assert.equal(running.sandbox.massive.count(PATH), 3);
  });

  it('answers 503 PROVIDER_NOT_CONFIGURED without a key, route still registered', async (t) => {
    const running = await startApp(t, { configure: (c) => ({ ...c, mode: 'live', massive: { ...c.massive, apiKey: undefined } }) });
    const res = await running.get('/api/provider-b/dividends?symbol=AAPL');
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'PROVIDER_NOT_CONFIGURED');
    assert.equal(running.sandbox.massive.count(), 0);
  });
});
