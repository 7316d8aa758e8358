// How the adapter backs off on a refusal: the shortest window the text names first, the next one when the
// first call after that back-off is refused again, and a doubling back-off when the text names none (a
// wording the classifier does not know, counted as drift). The clock is mocked; the HTTP answers are the
// recorded bodies.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import pino from 'pino';
import { DAY_MS, MINUTE_MS } from '../../../src/budget/budget-guard.js';
import { minuteOf } from '../../../src/budget/budget-ledger.js';
import { MemoryBudgetGuard } from '../../../src/budget/memory-budget-guard.js';
import { PlanRefusalError, UpstreamRefusalError } from '../../../src/core/errors.js';
import { AlphaVantageClient } from '../../../src/upstreams/alpha-vantage/alpha-vantage-client.js';
import { HttpClient, type UpstreamResponse } from '../../../src/upstreams/http-client.js';
import { PREMIUM_ENDPOINT } from '../../../src/wire/alpha-vantage/notices.js';
import { recording } from '../../helpers/recorded.js';

/** A client whose answers are queued bodies, and whose budget has no caps (only the back-off counts). */
function clientAnswering(bodies: unknown[]) {
  const http = new HttpClient({ name: 'Alpha Vantage', timeoutMs: 1_000, logger: pino({ level: 'silent' }) });
  const queue = [...bodies];
  http.request = async (): Promise<UpstreamResponse> => {
    const json = queue.shift();
    return { status: 200, headers: {}, json, text: JSON.stringify(json) };
  };
  const budget = new MemoryBudgetGuard('alphaVantage', { perMinute: 0, perDay: 0, minIntervalMs: 0 });
  return new AlphaVantageClient({ url: 'http://127.0.0.1:9/query', apiKey: 'k', http, budget, plan: 'free' });
}

async function refusal(call: Promise<unknown>): Promise<UpstreamRefusalError> {
  const error = await call.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof UpstreamRefusalError, String(error));
  return error;
}

const note = recording('alpha-vantage', 'note-5-per-minute-500-per-day').json;
const quote = recording('alpha-vantage', 'global-quote-msft').json;

test('a text naming a minute and a day: a minute first, the day when the first call after it is refused too', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-24T15:00:00Z') });
  t.after(() => mock.timers.reset());
  const client = clientAnswering([note, note, quote, note]);
  const first = await refusal(client.globalQuote('MSFT'));
  assert.ok(
    first.retryAfterSeconds !== undefined && first.retryAfterSeconds * 1000 >= MINUTE_MS && first.retryAfterSeconds * 1000 < 2 * MINUTE_MS,
  );
  assert.equal(first.drift, undefined, 'a recognised notice is no drift');
  mock.timers.tick(first.retryAfterSeconds * 1000);
  const second = await refusal(client.globalQuote('MSFT'));
  assert.ok(second.retryAfterSeconds !== undefined && second.retryAfterSeconds * 1000 >= DAY_MS, String(second.retryAfterSeconds));
  // A day later the answer is data again, and a later refusal starts over at the minute.
  mock.timers.tick(second.retryAfterSeconds * 1000);
  assert.equal((await client.globalQuote('MSFT'))['Global Quote']['01. symbol'], 'MSFT');
  mock.timers.tick(10 * MINUTE_MS);
  const later = await refusal(client.globalQuote('MSFT'));
  assert.ok(later.retryAfterSeconds !== undefined && later.retryAfterSeconds * 1000 < 2 * MINUTE_MS);
});

test('a refusal naming only the day backs off a day at once', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-24T15:00:00Z') });
  t.after(() => mock.timers.reset());
  const client = clientAnswering([recording('alpha-vantage', 'information-daily-cap-2025-12').json]);
  const refused = await refusal(client.globalQuote('MSFT'));
  assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds * 1000 >= DAY_MS);
});

test('a notice naming no window: a minute, then twice as long each time, counted as drift', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-24T15:00:00Z') });
  t.after(() => mock.timers.reset());
  const unknown = { Information: 'Thank you for using Alpha Vantage! Something we have never said before.' };
  const client = clientAnswering([unknown, unknown, unknown]);
  const seconds: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const refused = await refusal(client.globalQuote('MSFT'));
    assert.equal(refused.drift, 'unrecognised-notice');
    seconds.push(refused.retryAfterSeconds as number);
    mock.timers.tick((seconds[i] as number) * 1000);
  }
  // The guard's minute (with its margin), doubled each time.
  const minute = minuteOf({ perMinute: 0, perDay: 0, minIntervalMs: 0 });
  assert.deepEqual(
    seconds,
    [1, 2, 4].map((k) => Math.ceil((k * minute) / 1000)),
  );
});

/** A client on `plan` whose one answer is `text`, counting HTTP calls, the URLs asked and budget acquisitions. */
function countingClient(plan: 'free' | 'premium', text: string) {
  const http = new HttpClient({ name: 'Alpha Vantage', timeoutMs: 1_000, logger: pino({ level: 'silent' }) });
  const seen = { http: 0, budget: 0, urls: [] as string[] };
  http.request = async (url: URL): Promise<UpstreamResponse> => {
    seen.http++;
    seen.urls.push(url.search);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: 200, headers: {}, json, text };
  };
  const budget = new MemoryBudgetGuard('alphaVantage', { perMinute: 0, perDay: 0, minIntervalMs: 0 });
  const acquire = budget.acquire.bind(budget);
  budget.acquire = async () => {
    seen.budget++;
    return acquire();
  };
  return { client: new AlphaVantageClient({ url: 'http://127.0.0.1:9/query', apiKey: 'k', http, budget, plan }), seen };
}

test("a free plan refuses a premium function with Alpha Vantage's notice, before the budget and without a call", async () => {
  const { client, seen } = countingClient('free', JSON.stringify(quote));
  assert.equal(client.planAllows('FX_INTRADAY'), false);
  assert.equal(client.planAllows('FX_DAILY'), true);
  const call = {
    fn: 'FX_INTRADAY',
    params: [
      ['from_symbol', 'EUR'],
      ['to_symbol', 'USD'],
      ['interval', '5min'],
    ] as const,
    format: 'json' as const,
  };
  await assert.rejects(client.forward(call), (e: unknown) => e instanceof PlanRefusalError && e.message === PREMIUM_ENDPOINT.Information);
  await assert.rejects(client.technical({ indicator: 'MACD', symbol: 'IBM', interval: 'daily', seriesType: 'close' }), PlanRefusalError);
  assert.deepEqual([seen.http, seen.budget], [0, 0]);
  const premium = countingClient('premium', JSON.stringify({ 'Meta Data': {}, 'Time Series FX (5min)': {} }));
  await premium.client.forward(call);
  assert.deepEqual([premium.seen.http, premium.seen.budget], [1, 1]);
});

test('a forwarded call sends its parameters in order, datatype=csv for CSV, and the service key last', async () => {
  const text = 'timestamp,open,high,low,close\r\n2024-05-10,1.07,1.08,1.06,1.077\r\n';
  const { client, seen } = countingClient('free', text);
  const answer = await client.forward({
    fn: 'FX_DAILY',
    params: [
      ['from_symbol', 'EUR'],
      ['to_symbol', 'USD'],
    ],
    format: 'csv',
  });
  assert.equal(answer, text);
  assert.equal(seen.urls[0], '?function=FX_DAILY&from_symbol=EUR&to_symbol=USD&datatype=csv&apikey=k');
  const json = countingClient(
    'free',
    JSON.stringify({
      'Error Message':
        'Invalid API call. Please retry or visit the documentation (https://www.alphavantage.co/documentation/) for FX_DAILY.',
    }),
  );
  await assert.rejects(
    json.client.forward({
      fn: 'FX_DAILY',
      params: [
        ['from_symbol', 'EUR'],
        ['to_symbol', 'XXX'],
      ],
      format: 'csv',
    }),
    (e: { code?: string }) => e.code === 'SYMBOL_NOT_FOUND',
  );
});
