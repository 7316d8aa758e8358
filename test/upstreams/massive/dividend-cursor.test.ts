import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/errors.js';
import { CURSOR_PATTERN, decodeCursor, encodeCursor } from '../../../src/upstreams/massive/dividend-cursor.js';
import { dividendsUrl } from '../../../src/upstreams/massive/massive-client.js';

describe('dividend cursor', () => {
  it('round-trips symbol, limit and the upstream cursor, and matches its own pattern', () => {
    const state = { symbol: 'BRK.B', limit: 250, upstream: 'dGlja2VyPUJSSy5C+/==' };
    const text = encodeCursor(state);
    assert.match(text, new RegExp(CURSOR_PATTERN));
    assert.deepEqual(decodeCursor(text), state);
    assert.deepEqual(decodeCursor(encodeCursor({ symbol: null, limit: 1, upstream: 'x' })), { symbol: null, limit: 1, upstream: 'x' });
  });

  it('holds no address: an upstream URL cannot be smuggled in', () => {
    const smuggled = Buffer.from(JSON.stringify({ v: 1, s: null, l: 10, c: 'https://evil.example/x?y=1' })).toString('base64url');
    assert.throws(() => decodeCursor(smuggled), (e: ApiError) => e.code === 'INVALID_PARAMETER');
  });

  it('rejects garbage, other versions and out-of-range limits', () => {
    const make = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const bad of ['not-json', make({ v: 2, s: null, l: 10, c: 'a' }), make({ v: 1, s: null, l: 1001, c: 'a' }), make({ v: 1, s: 'a b', l: 10, c: 'a' }), make([1])]) {
      assert.throws(() => decodeCursor(bad), ApiError, bad);
    }
  });

  it('is rebuilt into a URL on the configured host only, with the cursor encoded', () => {
    const url = dividendsUrl('http://127.0.0.1:9/base/', { limit: 10, cursor: 'a+b/c=' });
    assert.equal(url.origin, 'http://127.0.0.1:9');
    assert.equal(url.pathname, '/base/v3/reference/dividends');
    assert.equal(url.search, '?cursor=a%2Bb%2Fc%3D');
    const first = dividendsUrl('http://h', { ticker: 'BRK.B', limit: 100 });
    assert.equal(first.search, '?ticker=BRK.B&limit=100&order=desc&sort=ex_dividend_date');
    assert.doesNotMatch(first.href, /apiKey/i);
  });
});
