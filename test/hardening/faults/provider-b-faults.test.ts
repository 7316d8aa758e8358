// Provider B (Massive dividends) under every upstream fault: see fault-matrix.ts for what each case proves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Family, type FaultName, runBreaker, runFault } from './fault-matrix.js';

const family: Family = {
  statusId: 'provider-b',
  env: { CACHE_DIVIDENDS_FRESH_SECONDS: '0' },
  sim: (sandbox) => sandbox.massive,
  retarget: (config, replace) => ({ ...config, massive: { ...config.massive, url: replace(config.massive.url) } }),
  path: '/api/provider-b/dividends?symbol=AAPL',
  otherKeyPath: '/api/provider-b/dividends?symbol=MSFT',
  otherPath: '/api/provider-a/quote?symbol=IBM',
  isGood: (res) => {
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body.results) && res.body.results.length > 0);
    assert.ok(res.body.results.every((r: { ticker: string }) => r.ticker === 'AAPL'));
  },
  expect: {
    'latency beyond the deadline': { status: 504, code: 'UPSTREAM_TIMEOUT' },
    'connection refused': { status: 502, code: 'UPSTREAM_ERROR' },
    'connection dropped before an answer': { status: 502, code: 'UPSTREAM_ERROR' },
    'connection reset mid-body': { status: 502, code: 'UPSTREAM_ERROR' },
    'body that never ends (slow drip)': { status: 504, code: 'UPSTREAM_TIMEOUT' },
    'truncated JSON': { status: 502, code: 'UPSTREAM_ERROR' },
    'HTML error page with status 200': { status: 502, code: 'UPSTREAM_ERROR' },
    'huge body (32 MiB)': { status: 502, code: 'UPSTREAM_ERROR' },
    '5xx burst': { status: 502, code: 'UPSTREAM_ERROR' },
    '429 with Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true },
    // Without Retry-After the guard backs off for a minute.
    '429 without Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true, recovers: false },
    'flapping (fail, recover, fail)': { status: 502, code: 'UPSTREAM_ERROR' },
  },
};

for (const fault of Object.keys(family.expect) as FaultName[]) {
  test(`provider B, ${fault}`, (t) => runFault(t, family, fault));
}

test('provider B, dead upstream: the circuit opens, fails fast, then a probe closes it', (t) =>
  runBreaker(t, family, { status: 502, code: 'UPSTREAM_ERROR' }));
