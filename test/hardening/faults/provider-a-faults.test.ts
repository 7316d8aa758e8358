// Provider A (Alpha Vantage) under every upstream fault: see fault-matrix.ts for what each case proves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Family, type FaultName, runBreaker, runFault } from './fault-matrix.js';

const family: Family = {
  statusId: 'provider-a',
  env: { CACHE_QUOTE_FRESH_SECONDS: '0' },
  sim: (sandbox) => sandbox.alphaVantage,
  retarget: (config, replace) => ({ ...config, alphaVantage: { ...config.alphaVantage, url: replace(config.alphaVantage.url) } }),
  path: '/api/provider-a/quote?symbol=IBM',
  otherKeyPath: '/api/provider-a/quote?symbol=MSFT',
  otherPath: '/api/provider-b/dividends?symbol=AAPL',
  isGood: (res) => {
    assert.equal(res.status, 200);
    assert.equal(res.body['Global Quote']['01. symbol'], 'IBM');
    assert.match(res.body['Global Quote']['05. price'], /^\d+\.\d{4}$/);
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
    // Alpha Vantage's own limit signal is a body; a bare 429 backs the guard off for a minute.
    '429 with Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true, recovers: false },
    '429 without Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true, recovers: false },
    'flapping (fail, recover, fail)': { status: 502, code: 'UPSTREAM_ERROR' },
  },
};

for (const fault of Object.keys(family.expect) as FaultName[]) {
  test(`provider A, ${fault}`, (t) => runFault(t, family, fault));
}

test('provider A, dead upstream: the circuit opens, fails fast, then a probe closes it', (t) =>
  runBreaker(t, family, { status: 502, code: 'UPSTREAM_ERROR' }));
