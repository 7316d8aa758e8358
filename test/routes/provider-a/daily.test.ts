import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { startApp } from '../../helpers/app.js';

const DAILY = '/api/provider-a/daily';

test('daily answers TIME_SERIES_DAILY in the upstream shape: compact by default, full on request', async (t) => {
  const { get, sandbox } = await startApp(t);
  const seen = once(sandbox.alphaVantage, 'request') as Promise<[SimRequestEvent]>;
  const compact = await get(`${DAILY}?symbol=ibm`);
  assert.equal(compact.status, 200, compact.text);
  assert.equal((await seen)[0].query.get('outputsize'), 'compact');
  assert.deepEqual(Object.keys(compact.body), ['Meta Data', 'Time Series (Daily)']);
  assert.equal(compact.body['Meta Data']['2. Symbol'], 'IBM');
  const rows = Object.entries(compact.body['Time Series (Daily)']) as [string, Record<string, string>][];
  assert.equal(rows.length, 100);
  const dates = rows.map(([date]) => date);
  assert.deepEqual(dates, [...dates].sort().reverse(), 'newest first');
  for (const [, row] of rows) {
    assert.ok(Number(row['3. low']) <= Number(row['4. close']) && Number(row['4. close']) <= Number(row['2. high']));
    assert.match(row['5. volume']!, /^\d+$/);
  }
  const full = await get(`${DAILY}?symbol=IBM&outputsize=FULL`);
  assert.equal(full.status, 200);
  assert.ok(Object.keys(full.body['Time Series (Daily)']).length > 100);
  assert.equal((await get(`${DAILY}?symbol=IBM&outputsize=compact`)).headers['x-cache'], 'HIT');
});

test('bad outputsize is a 400; an unknown symbol a 404', async (t) => {
  const { get } = await startApp(t);
  const bad = await get(`${DAILY}?symbol=IBM&outputsize=huge`);
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /outputsize must be one of: compact, full/);
  const unknown = await get(`${DAILY}?symbol=ZZZZQX`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'SYMBOL_NOT_FOUND');
});
