// Every route the hot path can answer, with every option that changes an answer (CORS, the per-caller
// limit, conditional requests, HEAD): the hot path's answer must be the full pipeline's answer for the same
// request, header for header and byte for byte, but for what differs per request. A URL's other spellings
// share its cache entry, which lets the pipeline answer the same entry while the hot path holds another.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

/** Each cached route as three spellings of one cache key. */
const ROUTES: readonly [string, string, string][] = [
  ['/api/provider-a/quote?symbol=IBM', '/api/provider-a/quote?symbol=ibm', '/api/provider-a/quote?symbol=Ibm'],
  [
    '/api/provider-a/technical?symbol=IBM&indicator=RSI',
    '/api/provider-a/technical?symbol=IBM&indicator=rsi',
    '/api/provider-a/technical?symbol=ibm&indicator=Rsi',
  ],
  ['/api/provider-a/search?keywords=micro', '/api/provider-a/search?keywords=MICRO', '/api/provider-a/search?keywords=Micro'],
  ['/api/provider-a/daily?symbol=IBM', '/api/provider-a/daily?symbol=ibm', '/api/provider-a/daily?symbol=Ibm'],
  [
    '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=MSFT',
    '/api/provider-a/query?function=global_quote&symbol=MSFT',
    '/api/provider-a/query?function=Global_Quote&symbol=msft',
  ],
  [
    '/api/provider-a/query?function=TIME_SERIES_WEEKLY&symbol=IBM',
    '/api/provider-a/query?function=time_series_weekly&symbol=IBM',
    '/api/provider-a/query?function=Time_Series_Weekly&symbol=ibm',
  ],
  [
    '/api/provider-b/dividends?symbol=AAPL&limit=5',
    '/api/provider-b/dividends?symbol=aapl&limit=5',
    '/api/provider-b/dividends?symbol=Aapl&limit=5',
  ],
  ['/api/market/overview', '/api/market/overview?', '/api/market/overview?a=1'],
  ['/api/broker/health', '/api/broker/health?', '/api/broker/health?a=1'],
];

/** Broker data: answered by the pipeline every time, so that every caller meets the access rule. */
const BROKER_DATA = ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes?symbols=AAPL,MSFT'];

/** Values that differ per request by design; the rate-limit count is checked on its own. */
const PER_REQUEST = new Set(['x-request-id', 'age', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'connection', 'keep-alive']);

/** Long fresh windows, so every entry stays fresh for the whole test. */
const FRESH = Object.fromEntries(
  [
    'QUOTE',
    'TECHNICAL_DAILY',
    'SEARCH',
    'SERIES_DAILY',
    'DIVIDENDS',
    'OVERVIEW',
    'BROKER_ACCOUNTS',
    'BROKER_POSITIONS',
    'BROKER_QUOTES',
  ].map((name) => [`CACHE_${name}_FRESH_SECONDS`, '600']),
);

/** The token the broker-data test admits with; also set where a configuration sets every access option. */
const BROKER_TOKEN = 'a-broker-token-of-32-characters!';
const DASHBOARD = 'https://dash.example.com';

/**
 * The configurations people deploy: each must keep the hot path answering, with the pipeline's answer. The
 * test client's peer is 127.0.0.1, so `10.0.0.0/8` alone is an untrusted peer sending X-Forwarded-For.
 */
const ACCESS = { BROKER_TOKEN, BROKER_ALLOW_FROM: '10.0.0.0/8', METRICS_TOKEN: 'a-metrics-token-of-32-characters' };
const CONFIGURATIONS: Readonly<Record<string, Record<string, string>>> = {
  default: {},
  'TRUST_PROXY=true': { TRUST_PROXY: 'true' },
  'TRUST_PROXY=1 (a hop count)': { TRUST_PROXY: '1' },
  'TRUST_PROXY=127.0.0.1,10.0.0.0/8 (a trusted peer)': { TRUST_PROXY: '127.0.0.1,10.0.0.0/8' },
  'TRUST_PROXY=10.0.0.0/8 (an untrusted peer)': { TRUST_PROXY: '10.0.0.0/8' },
  'CORS_ORIGINS list': { CORS_ORIGINS: `${DASHBOARD},https://other.example.com` },
  'BROKER_TOKEN, BROKER_ALLOW_FROM, METRICS_TOKEN': ACCESS,
  'all set': { ...ACCESS, TRUST_PROXY: '127.0.0.1,10.0.0.0/8', CORS_ORIGINS: DASHBOARD },
};

/** Every request shape whose answer may differ: origins (listed, not listed, none), forwarded callers, conditionals, HEAD. */
function cases(etag: string): [Record<string, string>, 'GET' | 'HEAD'][] {
  return [
    [{}, 'GET'],
    [{ origin: 'https://dashboard.example' }, 'GET'],
    [{ origin: DASHBOARD }, 'GET'],
    [{ origin: DASHBOARD }, 'HEAD'],
    [{ origin: 'https://dashboard.example' }, 'HEAD'],
    [{ 'x-forwarded-for': '203.0.113.9' }, 'GET'],
    [{ 'x-forwarded-for': '198.51.100.7, 10.1.2.3', origin: DASHBOARD }, 'GET'],
    [{ 'x-forwarded-for': '198.51.100.8, 203.0.113.9' }, 'GET'],
    [{ 'if-none-match': etag, origin: DASHBOARD }, 'GET'],
    [{ 'if-none-match': `W/${etag}, "other"` }, 'GET'],
    [{ 'if-none-match': '"stale-etag"' }, 'GET'],
  ];
}

function comparable(res: TestResponse): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => !PER_REQUEST.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** The `ip` of the request line logged for `reqId`. */
function loggedIp(running: RunningApp, reqId: string): unknown {
  const line = running.scan.lines.find((l) => l.includes(`"reqId":"${reqId}"`));
  assert.ok(line !== undefined, `a request line for ${reqId}`);
  return (JSON.parse(line) as { ip?: unknown }).ip;
}

/** Asks the same URL and headers twice: once armed on the hot path, once where only the pipeline answers. */
async function pair(
  running: RunningApp,
  hotUrl: string,
  pipelineUrl: string,
  headers: Record<string, string>,
  method: 'GET' | 'HEAD' = 'GET',
) {
  const before = running.app.hotPath.served;
  const hotId = `hot-${randomUUID()}`;
  const hot = await running.get(hotUrl, { ...headers, 'x-request-id': hotId }, method);
  assert.equal(running.app.hotPath.served, before + 1, `${method} ${hotUrl} ${JSON.stringify(headers)}: answered by the hot path`);
  const pipelineId = `pipeline-${randomUUID()}`;
  const pipeline = await running.get(pipelineUrl, { ...headers, 'x-request-id': pipelineId }, method);
  assert.equal(running.app.hotPath.served, before + 1, `${method} ${pipelineUrl}: answered by the pipeline`);
  return { hot, pipeline, ids: [hotId, pipelineId] as const };
}

/** Arms the hot path for one route's second spelling, then holds every case's hot answer to the pipeline's. */
async function holdRoute(running: RunningApp, [canonical, armed, other]: readonly [string, string, string], limited: boolean) {
  const first = await running.get(canonical);
  assert.equal(first.status, 200, first.text);
  // The pipeline answers the second spelling from the cache, which arms the hot path for it.
  assert.equal((await running.get(armed)).headers['x-cache'], 'HIT');
  const logged: [string, string, string][] = [];
  for (const [index, [headers, method]] of cases(String(first.headers.etag)).entries()) {
    // Each pipeline answer arms its spelling too: a fresh spelling per case keeps the pipeline answering.
    const spelling = `${other}${other.includes('?') ? '&' : '?'}case=${index}`;
    const { hot, pipeline, ids } = await pair(running, armed, spelling, headers, method);
    const what = `${method} ${JSON.stringify(headers)}`;
    assert.equal(hot.status, pipeline.status, what);
    assert.equal(hot.text, pipeline.text, what);
    assert.deepEqual(comparable(hot), comparable(pipeline), what);
    logged.push([...ids, what]);
    if (limited) {
      // One caller: the hot answer was counted first, under the same key, so the pipeline saw one more.
      assert.equal(Number(hot.headers['x-ratelimit-remaining']) - 1, Number(pipeline.headers['x-ratelimit-remaining']), what);
    } else {
      assert.equal(hot.headers['x-ratelimit-remaining'], undefined, what);
    }
  }
  // A last answer, so that the pipeline's last request line (written as its answer finishes) is in.
  await running.get('/api/system/live');
  for (const [hotId, pipelineId, what] of logged)
    assert.equal(loggedIp(running, hotId), loggedIp(running, pipelineId), `${what}: logged ip`);
}

for (const limit of ['0', '1000']) {
  describe(`hot path parity, RATE_LIMIT_PER_MINUTE=${limit}`, () => {
    for (const route of ROUTES) {
      test(route[0], async (t) => {
        const running = await startApp(t, {
          transport: 'socket',
          env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: limit, BROKER: 'ibkr', ...FRESH },
        });
        await holdRoute(running, route, limit !== '0');
      });
    }
  });
}

describe('hot path parity under each configuration (RATE_LIMIT_PER_MINUTE=1000)', () => {
  for (const [name, env] of Object.entries(CONFIGURATIONS)) {
    test(name, async (t) => {
      const running = await startApp(t, {
        transport: 'socket',
        env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '1000', BROKER: 'ibkr', ...FRESH, ...env },
      });
      for (const route of ROUTES) await holdRoute(running, route, true);
    });
  }
});

for (const [name, env] of Object.entries({ default: {}, 'all set': CONFIGURATIONS['all set'] })) {
  describe(`broker data never reaches the hot path (${name})`, () => {
    for (const path of BROKER_DATA) {
      test(path, async (t) => {
        // Only the token admits: this loopback caller stands for any refused one.
        const running = await startApp(t, {
          transport: 'socket',
          env: { ...ANSWERS_ENV, BROKER: 'ibkr', ...env, BROKER_ALLOW_FROM: 'none', BROKER_TOKEN, ...FRESH },
        });
        const admitted = { authorization: `Bearer ${BROKER_TOKEN}` };
        assert.equal((await running.get(path, admitted)).status, 200);
        const warm = await running.get(path, admitted);
        assert.equal(warm.headers['x-cache'], 'HIT');
        assert.match(String(warm.headers['cache-control']), /^private, /);
        assert.equal(warm.headers.vary, 'Origin, Authorization');
        const served = running.app.hotPath.served;
        const refusedHeaders: Record<string, string>[] = [
          {},
          { authorization: 'Bearer not-the-token' },
          { origin: 'https://evil.example', ...admitted },
          { 'x-forwarded-for': '10.1.2.3' },
        ];
        for (const headers of refusedHeaders) {
          const refused = await running.get(path, headers);
          assert.ok(refused.status === 403 || refused.status === 401, `${JSON.stringify(headers)}: ${refused.status}`);
          assert.equal(refused.body.error.code, 'BROKER_FORBIDDEN');
          assert.equal(refused.headers['access-control-allow-origin'], undefined);
          assert.doesNotMatch(refused.text, /DU1234567|positions|"last"/);
        }
        assert.equal(running.app.hotPath.served, served, 'the hot path answered none of them');
      });
    }
  });
}
