import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';

const SEARCH = '/api/provider-a/search';

test('search answers bestMatches, cached for a day, one provider-A call per distinct keywords', async (t) => {
  const { get, sandbox } = await startApp(t);
  const res = await get(`${SEARCH}?keywords=micro`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-cache'], 'MISS');
  const symbols = res.body.bestMatches.map((m: Record<string, string>) => m['1. symbol']);
  assert.ok(symbols.includes('MSFT') && symbols.includes('AMD'), symbols.join());
  assert.match(String(res.headers['cache-control']), /max-age=(86[34]\d\d)/);
  const again = await get(`${SEARCH}?keywords=MICRO`);
  assert.equal(again.headers['x-cache'], 'HIT', 'keywords are case-insensitive');
  assert.equal(sandbox.alphaVantage.count('/query'), 1);
  const none = await get(`${SEARCH}?keywords=qqqqzzzz`);
  assert.deepEqual(none.body, { bestMatches: [] });
});

test('keywords are required, bounded and plain text', async (t) => {
  const { get, sandbox } = await startApp(t);
  for (const [query, code] of [
    ['', 'MISSING_PARAMETER'],
    ['?keywords=', 'MISSING_PARAMETER'],
    ['?keywords=+', 'MISSING_PARAMETER'],
    [`?keywords=${'a'.repeat(65)}`, 'INVALID_PARAMETER'],
    ['?keywords=%3Cscript%3E', 'INVALID_PARAMETER'],
    ['?keywords=a&keywords=b', 'INVALID_PARAMETER'],
  ] as const) {
    const res = await get(`${SEARCH}${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, code, query);
    assert.equal(res.body['Error Message'], undefined, 'the Alpha Vantage key is only on /query');
  }
  assert.equal(sandbox.alphaVantage.count(), 0);
});
