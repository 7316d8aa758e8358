import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, driftOf } from '../../../src/core/errors.js';
import {
  classifyDividendsResponse,
  cursorOf,
  type MassiveResponse,
  saysKeyNotProvided,
} from '../../../src/upstreams/massive/parse-dividends.js';
import { fixture, fixtureText } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

function res(status: number, name: string, headers: Record<string, string> = {}): MassiveResponse {
  const text = fixtureText('massive', name);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, json };
}

function errorOf(response: MassiveResponse, ticker?: string): ApiError {
  const classified = classifyDividendsResponse(response, { ticker });
  assert.equal(classified.kind, 'error');
  return (classified as { error: ApiError }).error;
}

describe('classifyDividendsResponse', () => {
  it('keeps every record field and takes the cursor out of next_url', () => {
    const classified = classifyDividendsResponse(res(200, 'dividends-aapl.json'), { ticker: 'AAPL' });
    assert.equal(classified.kind, 'data');
    if (classified.kind !== 'data') return;
    const raw = fixture('massive', 'dividends-aapl.json');
    assert.deepEqual(classified.page.results, raw.results);
    assert.equal(
      classified.page.nextCursor,
      'YWN0aXZlPXRydWUmZGF0ZT0yMDIxLTA0LTI1JmxpbWl0PTImb3JkZXI9ZGVzYyZwYWdlX21hcmtlcj1BJTdDMjAyNC0wNS0xMA==',
    );
  });

  it('gives no cursor on the last page', () => {
    const classified = classifyDividendsResponse(res(200, 'dividends-last-page.json'));
    assert.equal(classified.kind === 'data' && classified.page.nextCursor, null);
  });

  it('treats an empty list and a missing "results" as no dividends', () => {
    for (const name of ['dividends-empty.json', 'dividends-no-results-key.json']) {
      const classified = classifyDividendsResponse(res(200, name), { ticker: 'ZZZZ' });
      assert.deepEqual(classified, { kind: 'data', page: { results: [], nextCursor: null } }, name);
    }
  });

  it('reads numbers sent as strings, drops empty dates and keeps a + in a cursor', () => {
    const classified = classifyDividendsResponse(res(200, 'dividends-ugly-values.json'), { ticker: 'BRK.B' });
    assert.equal(classified.kind, 'data');
    if (classified.kind !== 'data') return;
    const [first, second] = classified.page.results;
    assert.deepEqual(first, {
      ticker: 'BRK.B',
      cash_amount: 1234.5,
      ex_dividend_date: '2023-12-14',
      id: 'Eabc',
      currency: 'USD',
      pay_date: '2023-12-28',
      frequency: 0,
      dividend_type: 'SC',
    });
    assert.deepEqual(second, { ticker: 'BRK.B', cash_amount: 0.5, ex_dividend_date: '2023-11-01' });
    assert.equal(classified.page.nextCursor, 'AB+c/d=');
  });

  it('refuses records of another ticker than the one asked for', () => {
    const error = errorOf(res(200, 'dividends-other-ticker.json'), 'AAPL');
    assert.equal(error.code, 'UPSTREAM_ERROR');
    assert.match(error.message, /MSFT when asked for AAPL/);
    assert.equal(driftOf(error), 'dividend-ticker');
  });

  it('refuses a record without an ex-dividend date', () => {
    const error = errorOf(res(200, 'dividends-bad-record.json'));
    assert.match(error.message, /record \(#1\) that has no valid ex_dividend_date/);
    assert.equal(driftOf(error), 'dividend-record');
  });

  it('refuses a next_url without a usable cursor', () => {
    const error = errorOf(res(200, 'dividends-next-url-without-cursor.json'));
    assert.match(error.message, /next_url without a usable cursor/);
    assert.equal(driftOf(error), 'next-url');
  });

  it('counts every unreadable 200 as drift, by reason; key, plan and HTTP failures are not drift', () => {
    const drifts = [
      [res(200, 'html-502.txt'), 'not-json'],
      [{ status: 200, headers: {}, json: [] }, 'dividends-body'],
      [res(200, 'error-200-status-error.json'), 'dividends-status'],
      [{ status: 200, headers: {}, json: { status: 'OK', results: {} } }, 'dividends-results'],
    ] as const;
    for (const [response, reason] of drifts) assert.equal(driftOf(errorOf(response)), reason, reason);
    for (const [status, name] of [
      [401, 'error-401-unknown-key.json'],
      [403, 'error-403-not-entitled.json'],
      [502, 'html-502.txt'],
    ] as const) {
      assert.equal(driftOf(errorOf(res(status, name))), undefined, name);
    }
  });

  it('names a bad key (401) without the key, and a missing key differently', () => {
    const unknown = errorOf(res(401, 'error-401-unknown-key.json'));
    assert.equal(unknown.code, 'UPSTREAM_ERROR');
    assert.equal(unknown.status, 502);
    assert.match(unknown.message, /API key is unknown or revoked/);
    assert.match(errorOf(res(401, 'error-401-no-key.json')).message, /no API key was sent/);
  });

  it('names the plan on 403', () => {
    const error = errorOf(res(403, 'error-403-not-entitled.json'));
    assert.equal(error.status, 502);
    assert.match(error.message, /plan .* does not include dividend data/);
  });

  it('classifies 429 as a refusal, with Retry-After when sent and 60 s when not', () => {
    assert.deepEqual(classifyDividendsResponse(res(429, 'error-429.json')), {
      kind: 'refusal',
      message: 'Massive refused the call: request limit of the plan reached',
      retryAfterMs: 60_000,
    });
    const withHeader = classifyDividendsResponse(res(429, 'error-429.json', { 'retry-after': '12' }));
    assert.equal(withHeader.kind === 'refusal' && withHeader.retryAfterMs, 12_000);
    const dated = classifyDividendsResponse(
      res(429, 'error-429.json', { 'retry-after': new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString() }),
      {
        now: Date.UTC(2030, 0, 1),
      },
    );
    assert.equal(dated.kind === 'refusal' && dated.retryAfterMs, 30_000);
  });

  it('turns HTML, a 5xx, an unexpected 404 and a 200 error body into UPSTREAM_ERROR', () => {
    assert.match(errorOf(res(502, 'html-502.txt')).message, /HTTP 502/);
    assert.match(errorOf(res(200, 'html-502.txt')).message, /not JSON/);
    assert.match(
      errorOf({ status: 404, headers: {}, json: { status: 'NOT_FOUND', request_id: 'x', message: 'Not Found' } }).message,
      /check MASSIVE_URL/,
    );
    assert.match(errorOf(res(200, 'error-200-status-error.json')).message, /status "ERROR"/);
  });

  it('never repeats the upstream address or request id in a message', () => {
    const names = [
      'dividends-next-url-without-cursor.json',
      'error-401-unknown-key.json',
      'error-403-not-entitled.json',
      'error-200-status-error.json',
    ];
    for (const name of names) {
      for (const status of [200, 401, 403, 500]) {
        const classified = classifyDividendsResponse(res(status, name));
        const message = classified.kind === 'error' ? classified.error.message : classified.kind === 'refusal' ? classified.message : '';
        assert.doesNotMatch(message, /massive\.com|https?:\/\/|request_id|[0-9a-f]{32}/i, `${status} ${name}`);
      }
    }
  });
});

describe('cursorOf', () => {
  it('reads the raw cursor value, percent-decoded but with + kept', () => {
    assert.equal(cursorOf('https://x/v3/reference/dividends?cursor=YQ%3D%3D'), 'YQ==');
    assert.equal(cursorOf('/v3/reference/dividends?limit=2&cursor=a+b'), 'a+b');
    assert.equal(cursorOf(undefined), null);
    assert.equal(cursorOf(''), null);
  });

  it('refuses cursors with characters that could change a URL', () => {
    for (const bad of [
      'https://x/?cursor=a%26apiKey%3Dx',
      'https://x/?cursor=%2F..%2Fadmin%3F',
      'https://x/?cursor=',
      'https://x/?cursor=%ZZ',
      'https://x/?cursor=a%20b',
    ]) {
      assert.throws(() => cursorOf(bad), ApiError, bad);
    }
    assert.throws(() => cursorOf(42), ApiError);
  });
});

describe('recorded key and plan refusals', () => {
  const recorded = (name: string): MassiveResponse => {
    const r = recording('massive', name);
    return { status: r.status, headers: {}, json: r.json };
  };

  it('"API Key was not provided" came back as a 400: told by the body, whatever the status', () => {
    const res = recorded('error-api-key-not-provided');
    assert.equal(res.status, 400);
    assert.equal(saysKeyNotProvided(res), true, 'the client then sends the key as apiKey');
    assert.match(errorOf(res).message, /no API key was sent/);
    const onCursor = classifyDividendsResponse(res, { cursor: true });
    assert.equal(onCursor.kind === 'error' && onCursor.error.code, 'UPSTREAM_ERROR', 'a key problem, not a bad cursor of the caller');
    assert.equal(saysKeyNotProvided({ ...res, status: 401 }), true);
    assert.equal(
      saysKeyNotProvided({
        status: 400,
        headers: {},
        json: { status: 'ERROR', request_id: 'x', error: 'limit must be a positive integer' },
      }),
      false,
    );
  });

  it('the real NOT_AUTHORIZED message (longer, ending with a pricing URL) names the plan without the URL', () => {
    const res = recorded('not-authorized-plan-timeframe-403');
    const message = errorOf(res).message;
    assert.match(message, /plan .* does not include dividend data/);
    const url = /https?:\/\/\S+/.exec(String((res.json as { message: string }).message))?.[0];
    assert.ok(url !== undefined && !message.includes(url));
    assert.match(errorOf({ ...res, status: 400 }).message, /plan/, 'by the body, whatever the status');
  });
});
