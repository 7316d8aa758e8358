// How fresh Alpha Vantage's recorded answers are by the plan (ALPHA_VANTAGE_ENTITLEMENT) and the time they
// were received, and the one parameter the plan adds to the calls it changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { MemoryBudgetGuard } from '../../../src/budget/memory-budget-guard.js';
import type { AlphaVantageEntitlement } from '../../../src/core/config.js';
import { AlphaVantageClient } from '../../../src/upstreams/alpha-vantage/alpha-vantage-client.js';
import { quoteFreshness, seriesFreshness } from '../../../src/upstreams/alpha-vantage/entitlement.js';
import type { TimeSeriesBody } from '../../../src/upstreams/alpha-vantage/parse-time-series.js';
import { HttpClient, type UpstreamResponse } from '../../../src/upstreams/http-client.js';
import type { GlobalQuoteBody } from '../../../src/wire/alpha-vantage/bodies.js';
import { recording } from '../../helpers/recorded.js';

const msft = recording('alpha-vantage', 'global-quote-msft').json as GlobalQuoteBody;
const amsterdam = recording('alpha-vantage', 'global-quote-iwda-as').json as GlobalQuoteBody;
// 2018-10-05, the recorded quote's trading day, a Friday: New York is 4 hours behind UTC.
const at = (time: string) => Date.parse(`2018-10-05T${time}Z`);

test('no plan: the free quote, updated at the end of each trading day, is end-of-day, dated by its own day', () => {
  assert.deepEqual(quoteFreshness(msft, undefined, at('19:00:00')), { kind: 'end-of-day', asOf: '2018-10-05' });
});

test('a plan: as live as the plan while the regular session of the quote day runs, the close otherwise', () => {
  assert.deepEqual(quoteFreshness(msft, 'realtime', at('19:00:00')), { kind: 'realtime', asOf: '2018-10-05T19:00:00.000Z' });
  // Delayed: 15 minutes behind, as the documentation states, and as of then.
  assert.deepEqual(quoteFreshness(msft, 'delayed', at('19:00:00')), {
    kind: 'delayed',
    delayMinutes: 15,
    asOf: '2018-10-05T18:45:00.000Z',
  });
  // 16:10 in New York: the delayed feed still shows the session's 15:55.
  assert.equal(quoteFreshness(msft, 'delayed', at('20:10:00')).kind, 'delayed');
  // After the close, on the next day (a Saturday), or before the open: the day's close.
  for (const received of [at('20:05:00'), Date.parse('2018-10-06T15:00:00Z'), at('13:00:00')])
    assert.deepEqual(quoteFreshness(msft, 'realtime', received), { kind: 'end-of-day', asOf: '2018-10-05' });
});

test("a plan's realtime and delayed data are the US market's: a listing with an exchange suffix stays end-of-day", () => {
  assert.deepEqual(quoteFreshness(amsterdam, 'realtime', Date.parse('2019-08-30T15:00:00Z')), { kind: 'end-of-day', asOf: '2019-08-30' });
  // A US share class (BRK.B) is no foreign listing.
  const brk = { 'Global Quote': { ...msft['Global Quote'], '01. symbol': 'BRK.B' } };
  assert.equal(quoteFreshness(brk, 'realtime', at('19:00:00')).kind, 'realtime');
});

test('series: daily bars end at a close whatever the plan; intraday ones follow it; a body without its day says nothing', () => {
  const daily = recording('alpha-vantage', 'time-series-daily-msft').json as TimeSeriesBody;
  const refreshed = (daily['Meta Data']['3. Last Refreshed'] as string).slice(0, 10);
  assert.deepEqual(seriesFreshness(daily, 'TIME_SERIES_DAILY', 'realtime', Date.parse(`${refreshed}T19:00:00Z`)), {
    kind: 'end-of-day',
    asOf: refreshed,
  });
  const intraday = recording('alpha-vantage', 'time-series-intraday-msft-1min').json as TimeSeriesBody;
  // Last refreshed 2017-12-18 14:56 in New York (EST: 19:56 UTC).
  const during = Date.parse('2017-12-18T19:57:00Z');
  assert.deepEqual(seriesFreshness(intraday, 'TIME_SERIES_INTRADAY', undefined, during), { kind: 'end-of-day', asOf: '2017-12-18' });
  assert.deepEqual(seriesFreshness(intraday, 'TIME_SERIES_INTRADAY', 'realtime', during), {
    kind: 'realtime',
    asOf: '2017-12-18T19:57:00.000Z',
  });
  const undated = { 'Meta Data': { '2. Symbol': 'MSFT' } } as unknown as TimeSeriesBody;
  assert.deepEqual(seriesFreshness(undated, 'TIME_SERIES_DAILY', undefined, during), { kind: 'unknown', asOf: '2017-12-18T19:57:00.000Z' });
});

/** The query of each call a client with `entitlement` makes. */
function clientRecording(entitlement: AlphaVantageEntitlement | undefined): { client: AlphaVantageClient; asked: URLSearchParams[] } {
  const http = new HttpClient({ name: 'Alpha Vantage', timeoutMs: 1_000, logger: pino({ level: 'silent' }) });
  const asked: URLSearchParams[] = [];
  const daily = recording('alpha-vantage', 'time-series-daily-msft').json;
  const intraday = recording('alpha-vantage', 'time-series-intraday-msft-1min').json;
  http.request = async (url): Promise<UpstreamResponse> => {
    const params = new URL(String(url)).searchParams;
    asked.push(params);
    const fn = params.get('function');
    const json = fn === 'GLOBAL_QUOTE' ? msft : fn === 'TIME_SERIES_DAILY' ? daily : intraday;
    return { status: 200, headers: {}, json, text: JSON.stringify(json) };
  };
  const budget = new MemoryBudgetGuard('alphaVantage', { perMinute: 0, perDay: 0, minIntervalMs: 0 });
  return {
    client: new AlphaVantageClient({ url: 'http://127.0.0.1:9/query', apiKey: 'k', http, budget, entitlement, plan: 'free' }),
    asked,
  };
}

test('the plan is sent as `entitlement` on quotes and intraday series only, and not at all without one', async () => {
  const calls = async (client: AlphaVantageClient) => {
    await client.globalQuote('MSFT');
    await client.timeSeries({ fn: 'TIME_SERIES_DAILY', symbol: 'MSFT', outputsize: 'compact' });
    await client.timeSeries({ fn: 'TIME_SERIES_INTRADAY', symbol: 'MSFT', interval: '1min' });
  };
  const planned = clientRecording('delayed');
  await calls(planned.client);
  assert.deepEqual(
    planned.asked.map((p) => [p.get('function'), p.get('entitlement')]),
    [
      ['GLOBAL_QUOTE', 'delayed'],
      ['TIME_SERIES_DAILY', null],
      ['TIME_SERIES_INTRADAY', 'delayed'],
    ],
  );
  const free = clientRecording(undefined);
  await calls(free.client);
  assert.ok(free.asked.every((p) => !p.has('entitlement')));
});
