// Yahoo one-day charts (recorded bodies) as GLOBAL_QUOTE: each field from the documented meta field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGlobalQuote } from '../../../src/upstreams/alpha-vantage/parse-global-quote.js';
import { exchangeDate } from '../../../src/upstreams/yahoo/parse-chart-quote.js';
import { chartQuote } from '../../helpers/chart-quote.js';
import { chartResult, previousCloseOf } from '../../../src/upstreams/yahoo/parse-chart.js';
import { driftOf } from '../../../src/core/errors.js';
import { fixture } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

const quoteOf = (name: string, yahoo: string, caller = yahoo) =>
  chartQuote(chartResult(fixture('yahoo', name), yahoo), yahoo, caller)['Global Quote'];

test("a recorded chart gives the ten fields, previous close from previousClose, the day in the exchange's zone", () => {
  const q = quoteOf('chart-gspc.json', '^GSPC', 'SPX.TEST');
  assert.deepEqual(q, {
    '01. symbol': 'SPX.TEST',
    '02. open': '5225.4900',
    '03. high': '5239.6600',
    '04. low': '5209.6800',
    '05. price': '5222.6800',
    '06. volume': '3617900000',
    // 1715371200 is 2024-05-10 20:00 UTC, 16:00 in New York.
    '07. latest trading day': '2024-05-10',
    '08. previous close': '5214.0800',
    '09. change': '8.6000',
    '10. change percent': '0.1649%',
  });
  // The body passes the same checks as provider A's own answers.
  assert.deepEqual(parseGlobalQuote({ 'Global Quote': q }), { 'Global Quote': q });
});

test('a one-day chart without previousClose (as real daily charts come) takes chartPreviousClose; regularMarketPreviousClose comes first', () => {
  const gold = fixture('yahoo', 'chart-gold-no-previous-close.json');
  assert.equal(
    quoteOf('chart-gold-no-previous-close.json', 'GC=F')['08. previous close'],
    gold.chart.result[0].meta.chartPreviousClose.toFixed(4),
  );
  const eth = fixture('yahoo', 'chart-regular-market-previous-close.json');
  assert.equal(
    quoteOf('chart-regular-market-previous-close.json', 'ETH-USD')['08. previous close'],
    eth.chart.result[0].meta.regularMarketPreviousClose.toFixed(4),
  );
});

test('chartPreviousClose is the close before the range: never the previous close of a longer range', () => {
  const meta = fixture('yahoo', 'chart-gold-no-previous-close.json').chart.result[0].meta;
  assert.equal(previousCloseOf(meta, '1d'), meta.chartPreviousClose);
  for (const range of ['5d', '1mo', '5y']) assert.equal(previousCloseOf(meta, range), undefined, range);
  assert.equal(previousCloseOf({ ...meta, previousClose: 1.5 }, '5y'), 1.5);
});

test("the latest trading day is the exchange's date, not UTC's", () => {
  // 23:30 UTC on 10 May is already 11 May in Tokyo and still 10 May in New York.
  const t = Date.UTC(2024, 4, 10, 23, 30) / 1000;
  assert.equal(exchangeDate(t, { exchangeTimezoneName: 'Asia/Tokyo' }), '2024-05-11');
  assert.equal(exchangeDate(t, { exchangeTimezoneName: 'America/New_York' }), '2024-05-10');
  assert.equal(exchangeDate(t, { gmtoffset: 32_400 }), '2024-05-11');
});

const recordedChart = (name: string) => {
  const r = recording('yahoo', name);
  const symbol = decodeURIComponent(r.request.path.split('/').pop() as string);
  return { r, symbol, json: r.json as any, asked: { range: r.request.query?.range ?? '', interval: r.request.query?.interval ?? '' } };
};

test("no regularMarketVolume (recorded AAPL range=1d, 2020): the volume is the day bar's, not 0", () => {
  const { json, symbol, asked } = recordedChart('chart-aapl-1d-1d');
  assert.equal(json.chart.result[0].meta.regularMarketVolume, undefined);
  const quote = chartQuote(chartResult(json, symbol), symbol, symbol, asked)['Global Quote'];
  assert.equal(quote['06. volume'], String(json.chart.result[0].indicators.quote[0].volume[0]));
  // No day high/low in that meta either: the bar's.
  assert.equal(quote['03. high'], json.chart.result[0].indicators.quote[0].high[0].toFixed(4));
  // Neither meta nor bar has a volume: 0.
  const bare = structuredClone(json);
  delete bare.chart.result[0].indicators.quote[0].volume;
  assert.equal(chartQuote(chartResult(bare, symbol), symbol, symbol, asked)['Global Quote']['06. volume'], '0');
});

test("a price above regularMarketDayHigh (recorded ^TNX) widens the high to the price; an intraday chart's day is its bars together", () => {
  const { json, symbol, asked } = recordedChart('chart-tnx-1d-5m');
  const meta = json.chart.result[0].meta;
  assert.ok(meta.regularMarketPrice > meta.regularMarketDayHigh);
  const quote = chartQuote(chartResult(json, symbol), symbol, symbol, asked)['Global Quote'];
  assert.equal(quote['03. high'], meta.regularMarketPrice.toFixed(4));
  assert.equal(quote['04. low'], meta.regularMarketDayLow.toFixed(4));
  assert.equal(quote['02. open'], json.chart.result[0].indicators.quote[0].open[0].toFixed(4));
  assert.equal(quote['08. previous close'], meta.previousClose.toFixed(4));
});

test('a period1/period2 chart has no previous close to offer (its chartPreviousClose is the close before the period)', () => {
  for (const name of ['chart-aapl-period-2022-02-22-1d', 'chart-gc-f-period-2020-01-02-1d', 'chart-wsu-de-period-2023-08-04-to-09-1d']) {
    const { json, symbol, asked } = recordedChart(name);
    assert.equal(asked.range, '', name);
    assert.equal(typeof json.chart.result[0].meta.chartPreviousClose, 'number', name);
    assert.throws(
      () => chartQuote(chartResult(json, symbol), symbol, symbol, asked),
      (e: unknown) => driftOf(e) === 'chart-no-previous-close',
      name,
    );
    // The range asked decides, not the body: asked as range=1d, the same meta would give chartPreviousClose.
    assert.equal(previousCloseOf(json.chart.result[0].meta, '1d'), json.chart.result[0].meta.chartPreviousClose, name);
  }
});

test('a chart without bars (recorded weekend, 1m) gives no quote: no made-up open', () => {
  const { json, symbol, asked } = recordedChart('chart-empty-weekend-1m');
  assert.equal(json.chart.result[0].timestamp, undefined);
  assert.throws(
    () => chartQuote(chartResult(json, symbol), symbol, symbol, asked),
    (e: unknown) => driftOf(e) === 'chart-no-day-bar',
  );
});

test('a chart without regularMarketPrice or regularMarketTime is counted under its reason', () => {
  const { json, symbol } = recordedChart('chart-aapl-1d-1d');
  for (const [field, drift] of [
    ['regularMarketPrice', 'chart-no-price'],
    ['regularMarketTime', 'chart-no-time'],
  ] as const) {
    const body = structuredClone(json);
    delete body.chart.result[0].meta[field];
    assert.throws(
      () => chartQuote(chartResult(body, symbol), symbol, symbol),
      (e: unknown) => driftOf(e) === drift,
      field,
    );
  }
});
