import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ApiError, driftOf, NotFoundAnswerError } from '../../../src/core/errors.js';
import { type ChartResponse, classifyChartResponse } from '../../../src/upstreams/yahoo/parse-chart.js';
import { chartUrl } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { fixture, fixtureText } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

/** A recorded 200 body as the overview reads it (classifyChartResponse): its snapshot, or the error it reads as, thrown. */
function parseChartBody(json: unknown, symbol: string, range: string) {
  const classified = classifyChartResponse({ status: 200, headers: {}, json }, symbol, range);
  if (classified.kind === 'data') return classified.value;
  throw classified.kind === 'error' ? classified.error : new Error(classified.message);
}

function res(status: number, name: string, headers: Record<string, string> = {}): ChartResponse {
  const text = fixtureText('yahoo', name);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, json };
}

/** Answered at `now` (ms): by default the Friday evening after the fixtures' session of 2024-05-10. */
function snapshot(name: string, symbol: string, now = Date.UTC(2024, 4, 10, 22)) {
  const classified = classifyChartResponse(res(200, name), symbol, '1d', now);
  assert.equal(classified.kind, 'data', classified.kind === 'error' ? classified.error.message : '');
  return (classified as { value: any }).value;
}

function error(status: number, name: string, symbol: string): ApiError {
  const classified = classifyChartResponse(res(status, name), symbol);
  assert.equal(classified.kind, 'error');
  return (classified as { error: ApiError }).error;
}

/** A chart body with its meta changed (an undefined value removes the key). */
function withMeta(json: unknown, changes: Record<string, unknown>): unknown {
  const copy = structuredClone(json) as { chart: { result: { meta: Record<string, unknown> }[] } };
  const meta = copy.chart.result[0]!.meta;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete meta[key];
    else meta[key] = value;
  }
  return copy;
}

describe('classifyChartResponse', () => {
  it('reads price, previous close, name, currency, category and time of an index', () => {
    assert.deepEqual(snapshot('chart-gspc.json', '^GSPC'), {
      symbol: '^GSPC',
      price: 5222.68,
      previousClose: 5214.08,
      currency: 'USD',
      name: 'S&P 500',
      category: 'index',
      asOf: '2024-05-10T20:00:00.000Z',
      // Answered at 18:00 New York, in the post-market period: the close of the day.
      freshness: { kind: 'end-of-day', market: 'post', asOf: '2024-05-10T20:00:00.000Z' },
    });
  });

  it('says how fresh by regularMarketTime against currentTradingPeriod: closed, pre, and in the session', () => {
    const at = (iso: string) => snapshot('chart-gspc.json', '^GSPC', Date.parse(iso)).freshness;
    // Saturday: the market closed, the Friday close stands.
    assert.deepEqual(at('2024-05-11T12:00:00Z'), { kind: 'end-of-day', market: 'closed', asOf: '2024-05-10T20:00:00.000Z' });
    // In the pre-market, the price the previous session's close: end of day.
    const pre = classifyChartResponse(
      { status: 200, headers: {}, json: withMeta(fixture('yahoo', 'chart-gspc.json'), { regularMarketTime: 1715284800 }) },
      '^GSPC',
      '1d',
      Date.parse('2024-05-10T09:00:00Z'),
    );
    assert.deepEqual(pre.kind === 'data' ? pre.value.freshness : pre, {
      kind: 'end-of-day',
      market: 'pre',
      asOf: '2024-05-09T20:00:00.000Z',
    });
    // An answer is never older than its price: a clock behind the chart's is taken as the price's time.
    assert.equal(at('2024-05-10T09:00:00Z').market, 'post');
    // In the session, a price from before it opened stands in for a trade: prior-close.
    assert.deepEqual(
      classifyChartResponse(
        { status: 200, headers: {}, json: withMeta(fixture('yahoo', 'chart-gspc.json'), { regularMarketTime: 1715347800 - 60 }) },
        '^GSPC',
        '1d',
        Date.parse('2024-05-10T15:00:00Z'),
      ),
      {
        kind: 'data',
        value: {
          ...snapshot('chart-gspc.json', '^GSPC'),
          asOf: '2024-05-10T13:29:00.000Z',
          freshness: { kind: 'prior-close', market: 'regular', asOf: '2024-05-10T13:29:00.000Z' },
        },
      },
    );
    // A chart without currentTradingPeriod says nothing of its market.
    const bare = withMeta(fixture('yahoo', 'chart-gspc.json'), { currentTradingPeriod: undefined });
    const read = classifyChartResponse({ status: 200, headers: {}, json: bare }, '^GSPC', '1d', Date.parse('2024-05-10T15:00:00Z'));
    assert.deepEqual(read.kind === 'data' ? read.value.freshness : read, { kind: 'unknown', asOf: '2024-05-10T20:00:00.000Z' });
  });

  it('reads a volatility index that fell', () => {
    const vix = snapshot('chart-vix-down.json', '^VIX');
    assert.equal(vix.price, 12.55);
    assert.equal(vix.previousClose, 12.69);
    assert.equal(vix.category, 'index');
    assert.equal(vix.currency, 'USD');
  });

  it('uses the last non-null close and its time when meta has no price or time', () => {
    const s = snapshot('chart-null-closes.json', 'CL=F');
    assert.equal(s.price, 79.01);
    assert.equal(s.previousClose, 79.26);
    assert.equal(s.asOf, new Date(1715313900 * 1000).toISOString());
    assert.equal(s.category, 'commodity');
  });

  it('falls back to chartPreviousClose only when previousClose is absent', () => {
    const gold = snapshot('chart-gold-no-previous-close.json', 'GC=F');
    assert.equal(gold.previousClose, 2310.1);
    assert.equal(gold.name, 'Gold Jun 24');
    const eth = snapshot('chart-regular-market-previous-close.json', 'ETH-USD');
    assert.equal(eth.previousClose, 3036.23, 'regularMarketPreviousClose wins over chartPreviousClose');
    assert.equal(eth.category, 'crypto');
    assert.equal(snapshot('chart-gspc.json', '^gspc').previousClose, 5214.08);
  });

  it('reads the instrument type in any case, and the long name when there is no short one', () => {
    const btc = snapshot('chart-btc-lowercase-type.json', 'BTC-USD');
    assert.equal(btc.category, 'crypto');
    assert.equal(btc.name, 'Bitcoin USD');
  });

  it('turns the 404 body (and a 200 carrying "Not Found") into SYMBOL_NOT_FOUND', () => {
    assert.equal(error(404, 'chart-404.json', 'NOPE').code, 'SYMBOL_NOT_FOUND');
    assert.equal(error(200, 'chart-404.json', 'NOPE').code, 'SYMBOL_NOT_FOUND');
  });

  it('only the chart\'s own "Not Found" (UPSTREAMS.md\'s 404 body) is the provider\'s "not found" the cache remembers', () => {
    assert.ok(error(404, 'chart-404.json', 'NOPE') instanceof NotFoundAnswerError);
    assert.ok(error(200, 'chart-404.json', 'NOPE') instanceof NotFoundAnswerError);
    // A 404 of another shape (a wrong YAHOO_URL path, an edge page) says nothing about the symbol: asked again.
    const elsewhere = (json: unknown) => (classifyChartResponse({ status: 404, headers: {}, json }, 'NOPE') as { error: ApiError }).error;
    for (const json of [{ finance: { result: null, error: { code: 'Not Found', description: 'HTTP 404 Not Found' } } }, undefined]) {
      assert.equal(elsewhere(json).code, 'SYMBOL_NOT_FOUND');
      assert.ok(!(elsewhere(json) instanceof NotFoundAnswerError), JSON.stringify(json));
    }
  });

  it('turns HTML, empty results, error bodies and missing closes into UPSTREAM_ERROR, each an unreadable answer with its reason', () => {
    const unreadable = (e: ApiError, drift: string, message: RegExp) => {
      assert.equal(e.code, 'UPSTREAM_ERROR');
      assert.equal(driftOf(e), drift, e.message);
      assert.match(e.message, message);
    };
    unreadable(error(200, 'html-consent.txt', '^GSPC'), 'not-json', /not JSON/);
    unreadable(error(200, 'chart-empty-result.json', '^GSPC'), 'chart-meta', /without "meta"/);
    unreadable(error(200, 'chart-200-with-error.json', '^GSPC'), 'chart-error', /an error/);
    unreadable(error(200, 'chart-no-previous-at-all.json', 'SI=F'), 'chart-no-previous-close', /no previous close/);
    unreadable(error(200, 'chart-gspc.json', '^DJI'), 'chart-symbol', /chart of \^GSPC/);
    const body = (json: unknown) => (classifyChartResponse({ status: 200, headers: {}, json }, '^GSPC') as { error: ApiError }).error;
    unreadable(body({ status: 'ok' }), 'chart-body', /without "chart"/);
    const meta = fixture('yahoo', 'chart-gspc.json').chart.result[0].meta;
    unreadable(
      body({ chart: { result: [{ meta: { ...meta, regularMarketPrice: undefined } }], error: null } }),
      'chart-no-price',
      /no price/,
    );
    unreadable(body({ chart: { result: [{ meta: { ...meta, regularMarketTime: undefined } }], error: null } }), 'chart-no-time', /no time/);
    // A server error is a failure, not an answer in a new shape: not counted as drift.
    const failed = error(503, 'html-consent.txt', '^GSPC');
    assert.match(failed.message, /HTTP 503/);
    assert.equal(driftOf(failed), undefined);
  });

  it('recorded ugly meta: a padded shortName is no name (the longName is), a null currency stays null (the range is asked as 1d here to reach them)', () => {
    const wsu = recording('yahoo', 'chart-wsu-de-period-2023-08-04-to-09-1d').json as any;
    assert.match(wsu.chart.result[0].meta.shortName, / {2,}I$/);
    assert.equal(parseChartBody(wsu, 'WSU.DE', '1d').name, 'WashTec AG', 'not "WashTec AG I"');
    const lucyw = recording('yahoo', 'chart-lucyw-null-currency-empty-holiday-1d').json as any;
    assert.equal(lucyw.chart.result[0].meta.currency, null);
    const snapshot = parseChartBody(lucyw, 'LUCYW', '1d');
    assert.equal(snapshot.currency, null);
    assert.equal(snapshot.name, lucyw.chart.result[0].meta.longName, 'no shortName: the long one');
    // As asked (period1/period2), neither chart has a previous close to offer.
    assert.throws(
      () => parseChartBody(lucyw, 'LUCYW', ''),
      (e: unknown) => driftOf(e) === 'chart-no-previous-close',
    );
  });

  it('recorded mutual funds are funds, not equities; a fund whose shortName is its symbol is named by its longName', () => {
    const fund = recording('yahoo', 'chart-fund-0p000071w8-to-period-2020-01-01-to-03-1d').json as any;
    const snapshot = parseChartBody(fund, '0P000071W8.TO', '1d');
    assert.equal(snapshot.category, 'fund');
    assert.equal(snapshot.name, 'TD US Index e');
    const stale = recording('yahoo', 'chart-mutual-fund-0p0000xts7-period-1d-stale').json as any;
    assert.equal(stale.chart.result[0].meta.instrumentType, 'MUTUALFUND');
    assert.equal(parseChartBody(stale, '0P0000XTS7', '1d').category, 'fund');
  });

  it('classifies 429 as a refusal with Retry-After or 60 s', () => {
    assert.deepEqual(classifyChartResponse(res(429, 'too-many-requests.txt'), '^GSPC'), {
      kind: 'refusal',
      message: 'Yahoo refused the call: too many requests',
      retryAfterMs: 60_000,
    });
    const r = classifyChartResponse(res(429, 'too-many-requests.txt', { 'retry-after': '5' }), '^GSPC');
    assert.equal(r.kind === 'refusal' && r.retryAfterMs, 5_000);
  });
});

describe('chartUrl', () => {
  it('encodes the symbol as one path segment and asks for one daily bar', () => {
    assert.equal(
      chartUrl('https://query1.finance.yahoo.com', '^GSPC').href,
      'https://query1.finance.yahoo.com/v8/finance/chart/%5EGSPC?range=1d&interval=1d',
    );
    assert.equal(chartUrl('http://h/', 'GC=F').pathname, '/v8/finance/chart/GC%3DF');
    assert.equal(chartUrl('http://h', '../x').pathname, '/v8/finance/chart/..%2Fx');
  });
});
