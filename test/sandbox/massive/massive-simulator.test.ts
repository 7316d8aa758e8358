import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { MassiveSimulator, type MassiveSimulatorOptions } from '../../../src/sandbox/massive/massive-simulator.js';

async function start(t: TestContext, options: Partial<MassiveSimulatorOptions> = {}): Promise<MassiveSimulator> {
  const sim = new MassiveSimulator({ validKeys: ['good'], ...options });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, body: await res.body.json(), headers: res.headers };
}

describe('Massive simulator', () => {
  it('lists a dividend calendar for a few hundred tickers, with the real record shape', async (t) => {
    const sim = await start(t);
    const records = sim.records();
    assert.ok(new Set(records.map((r) => r.ticker)).size > 200);
    const res = await get(`${sim.origin}/v3/reference/dividends?apiKey=good`);
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'OK');
    assert.match(res.body.request_id, /^[0-9a-f]{32}$/);
    assert.equal(res.body.results.length, 10, 'default limit 10');
    const r = res.body.results[0];
    // No `id`: no recorded answer carries one.
    assert.deepEqual(Object.keys(r).sort(), [
      'cash_amount',
      'currency',
      'declaration_date',
      'dividend_type',
      'ex_dividend_date',
      'frequency',
      'pay_date',
      'record_date',
      'ticker',
    ]);
    assert.ok(r.declaration_date < r.ex_dividend_date && r.ex_dividend_date < r.record_date && r.record_date < r.pay_date);
    assert.equal(typeof r.cash_amount, 'number');
  });

  it('pages by next_url whose cursor carries the query, and accepts the key as a bearer header', async (t) => {
    const sim = await start(t);
    const all = sim.records().filter((r) => r.ticker === 'JNJ');
    let url: string | undefined = `${sim.origin}/v3/reference/dividends?ticker=JNJ&limit=5&order=desc&sort=ex_dividend_date`;
    const seen: unknown[] = [];
    while (url !== undefined) {
      assert.doesNotMatch(url, /apiKey/, 'next_url carries no key');
      const res = await get(url, { authorization: 'Bearer good' });
      assert.equal(res.status, 200);
      seen.push(...res.body.results);
      url = res.body.next_url;
      // Unpadded base64url, as the recorded next_url has it.
      if (url !== undefined) assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v3\/reference\/dividends\?cursor=[A-Za-z0-9_-]+$/);
    }
    assert.deepEqual(seen, all);
  });

  it('filters by ticker (case-sensitive), dates and type, and sorts as asked', async (t) => {
    const sim = await start(t);
    const lower = await get(`${sim.origin}/v3/reference/dividends?apiKey=good&ticker=jnj`);
    assert.deepEqual(lower.body.results, []);
    const asc = await get(
      `${sim.origin}/v3/reference/dividends?apiKey=good&ticker=JNJ&order=asc&ex_dividend_date.gte=2025-01-01&limit=1000`,
    );
    const dates = asc.body.results.map((r: { ex_dividend_date: string }) => r.ex_dividend_date);
    assert.ok(dates.length > 0 && dates.every((d: string) => d >= '2025-01-01'));
    assert.deepEqual(dates, [...dates].sort());
    const special = await get(`${sim.origin}/v3/reference/dividends?apiKey=good&dividend_type=SC&limit=1000`);
    assert.ok(
      special.body.results.length > 0 &&
        special.body.results.every((r: { dividend_type: string; frequency: number }) => r.dividend_type === 'SC' && r.frequency === 0),
    );
  });

  it('answers the real 400 (no key, as recorded), 401, 403, 429 and 404 bodies', async (t) => {
    const sim = await start(t, { unentitledKeys: ['basic'], perMinute: 1, retryAfterSeconds: 7 });
    const base = `${sim.origin}/v3/reference/dividends`;
    const none = await get(base);
    assert.equal(none.status, 400);
    assert.deepEqual({ ...none.body, request_id: 'x' }, { status: 'ERROR', request_id: 'x', error: 'API Key was not provided' });
    const unknown = await get(`${base}?apiKey=nope`);
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.error, 'Unknown API Key');
    const plan = await get(`${base}?apiKey=basic`);
    assert.equal(plan.status, 403);
    assert.deepEqual(
      { ...plan.body, request_id: 'x' },
      {
        status: 'NOT_AUTHORIZED',
        request_id: 'x',
        message: 'You are not entitled to this data. Please upgrade your plan at https://polygon.io/pricing',
      },
    );
    assert.equal((await get(`${base}?apiKey=good`)).status, 200);
    const limited = await get(`${base}?apiKey=good`);
    assert.equal(limited.status, 429);
    assert.match(limited.body.error, /exceeded the maximum requests per minute/);
    assert.equal(limited.headers['retry-after'], '7');
    const missing = await get(`${sim.origin}/v3/reference/nothing?apiKey=good`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.status, 'NOT_FOUND');
  });

  it('takes fault switches over HTTP, as a standalone server', async (t) => {
    const sim = await start(t);
    const set = await request(`${sim.origin}/__sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ fault: 'http5xx', status: 502, remaining: 1 }),
    });
    assert.equal(set.statusCode, 200);
    await set.body.dump();
    const failed = await request(`${sim.origin}/v3/reference/dividends?apiKey=good`);
    assert.equal(failed.statusCode, 502);
    await failed.body.dump();
    assert.equal((await get(`${sim.origin}/v3/reference/dividends?apiKey=good`)).status, 200);
    assert.equal(sim.count('/v3/reference/dividends'), 2);
  });
});
