// The market overview source (Yahoo chart) under every upstream fault: see fault-matrix.ts. The overview
// aggregates instruments; when none can be served it answers one 502, or, when every instrument was refused for
// limits, one 429 QUOTA_EXHAUSTED.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Family, type FaultName, runBreaker, runFault } from './fault-matrix.js';

const family: Family = {
  statusId: 'overview',
  env: { CACHE_OVERVIEW_FRESH_SECONDS: '0' },
  sim: (sandbox) => sandbox.yahoo,
  retarget: (config, replace) => ({ ...config, overview: { ...config.overview, url: replace(config.overview.url) } }),
  path: '/api/market/overview',
  // Every instrument fails once: the whole overview fails, then heals by itself.
  flapRemaining: 10,
  otherPath: '/api/provider-a/quote?symbol=IBM',
  isGood: (res) => {
    assert.equal(res.status, 200);
    assert.match(res.body['^GSPC'].price, /^\d+\.\d{2}$/);
    assert.equal(res.headers['x-partial'], undefined);
  },
  expect: {
    'latency beyond the deadline': { status: 502, code: 'UPSTREAM_ERROR' },
    'connection refused': { status: 502, code: 'UPSTREAM_ERROR' },
    'connection dropped before an answer': { status: 502, code: 'UPSTREAM_ERROR' },
    'connection reset mid-body': { status: 502, code: 'UPSTREAM_ERROR' },
    'body that never ends (slow drip)': { status: 502, code: 'UPSTREAM_ERROR' },
    'truncated JSON': { status: 502, code: 'UPSTREAM_ERROR' },
    'HTML error page with status 200': { status: 502, code: 'UPSTREAM_ERROR' },
    'huge body (32 MiB)': { status: 502, code: 'UPSTREAM_ERROR' },
    '5xx burst': { status: 502, code: 'UPSTREAM_ERROR' },
    // A refusal for limits is said as one (429), as the quote routes say it. The instruments wait out the back-off
    // Yahoo asked for (1 s) before trying again, within the pacing cap.
    '429 with Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true, maxMs: 4_000 },
    '429 without Retry-After': { status: 429, code: 'QUOTA_EXHAUSTED', retryAfter: true, recovers: false },
    'flapping (fail, recover, fail)': { status: 502, code: 'UPSTREAM_ERROR' },
  },
};

for (const fault of Object.keys(family.expect) as FaultName[]) {
  test(`overview, ${fault}`, (t) => runFault(t, family, fault));
}

test('overview, dead upstream: the circuit opens, fails fast, then a probe closes it', (t) =>
  runBreaker(t, family, { status: 502, code: 'UPSTREAM_ERROR' }));
