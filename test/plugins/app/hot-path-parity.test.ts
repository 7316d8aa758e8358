// Every route the hot path can answer, with every option that changes an answer (CORS, the per-caller
// limit, conditional requests, HEAD): the hot path's answer must be the full pipeline's answer for the same
// request, header for header and byte for byte, but for what differs per request. A URL's other spellings
// share its cache entry, which lets the pipeline answer the same entry while the hot path holds another.
import assert from 'node:assert/strict';
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

function comparable(res: TestResponse): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => !PER_REQUEST.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
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
  const hot = await running.get(hotUrl, headers, method);
  assert.equal(running.app.hotPath.served, before + 1, `${method} ${hotUrl} ${JSON.stringify(headers)}: answered by the hot path`);
  const pipeline = await running.get(pipelineUrl, headers, method);
  assert.equal(running.app.hotPath.served, before + 1, `${method} ${pipelineUrl}: answered by the pipeline`);
  return { hot, pipeline };
}

for (const limit of ['0', '1000']) {
  describe(`hot path parity, RATE_LIMIT_PER_MINUTE=${limit}`, () => {
    for (const [canonical, armed, other] of ROUTES) {
      test(canonical, async (t) => {
        const running = await startApp(t, {
          transport: 'socket',
          env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: limit, BROKER: 'ibkr', ...FRESH },
        });
        const first = await running.get(canonical);
        assert.equal(first.status, 200, first.text);
        // The pipeline answers the second spelling from the cache, which arms the hot path for it.
        assert.equal((await running.get(armed)).headers['x-cache'], 'HIT');
        const cases: [Record<string, string>, 'GET' | 'HEAD'][] = [
          [{}, 'GET'],
          [{ origin: 'https://dashboard.example' }, 'GET'],
          [{ 'if-none-match': String(first.headers.etag) }, 'GET'],
          [{ 'if-none-match': `W/${first.headers.etag}, "other"` }, 'GET'],
          [{ 'if-none-match': '"stale-etag"' }, 'GET'],
          [{ origin: 'https://dashboard.example' }, 'HEAD'],
        ];
        for (const [headers, method] of cases) {
          // Each pipeline answer arms its spelling too: a fresh spelling per case keeps the pipeline answering.
          const spelling = `${other}${other.includes('?') ? '&' : '?'}case=${cases.findIndex((c) => c[0] === headers)}`;
          const { hot, pipeline } = await pair(running, armed, spelling, headers, method);
          const what = `${method} ${JSON.stringify(headers)}`;
          assert.equal(hot.status, pipeline.status, what);
          assert.equal(hot.text, pipeline.text, what);
          assert.deepEqual(comparable(hot), comparable(pipeline), what);
          if (limit !== '0') {
            // One caller: the hot answer was counted first, so the pipeline saw one more.
            assert.equal(Number(hot.headers['x-ratelimit-remaining']) - 1, Number(pipeline.headers['x-ratelimit-remaining']), what);
          } else {
            assert.equal(hot.headers['x-ratelimit-remaining'], undefined, what);
          }
        }
      });
    }
  });
}

describe('broker data never reaches the hot path', () => {
  const token = 'a-broker-token-of-32-characters!';
  for (const path of BROKER_DATA) {
    test(path, async (t) => {
      // Only the token admits: this loopback caller stands for any refused one.
      const running = await startApp(t, {
        transport: 'socket',
        env: { ...ANSWERS_ENV, BROKER: 'ibkr', BROKER_ALLOW_FROM: 'none', BROKER_TOKEN: token, ...FRESH },
      });
      const admitted = { authorization: `Bearer ${token}` };
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
