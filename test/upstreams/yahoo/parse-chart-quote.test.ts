// Yahoo one-day charts (recorded bodies) as GLOBAL_QUOTE: each field from the documented meta field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGlobalQuote } from '../../../src/upstreams/alpha-vantage/parse-global-quote.js';
import { chartQuote, exchangeDate } from '../../../src/upstreams/yahoo/parse-chart-quote.js';
import { chartResult, previousCloseOf } from '../../../src/upstreams/yahoo/parse-chart.js';
import { fixture } from '../../helpers/fixtures.js';

const quoteOf = (name: string, yahoo: string, caller = yahoo) => chartQuote(chartResult(fixture('yahoo', name), yahoo), yahoo, caller)['Global Quote'];

test('a recorded chart gives the ten fields, previous close from previousClose, the day in the exchange\'s zone', () => {
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
  assert.equal(quoteOf('chart-gold-no-previous-close.json', 'GC=F')['08. previous close'], gold.chart.result[0].meta.chartPreviousClose.toFixed(4));
  const eth = fixture('yahoo', 'chart-regular-market-previous-close.json');
  assert.equal(quoteOf('chart-regular-market-previous-close.json', 'ETH-USD')['08. previous close'], eth.chart.result[0].meta.regularMarketPreviousClose.toFixed(4));
});

test('chartPreviousClose is the close before the range: never the previous close of a longer range', () => {
  const meta = fixture('yahoo', 'chart-gold-no-previous-close.json').chart.result[0].meta;
  assert.equal(previousCloseOf(meta, '1d'), meta.chartPreviousClose);
  for (const range of ['5d', '1mo', '5y']) assert.equal(previousCloseOf(meta, range), undefined, range);
  assert.equal(previousCloseOf({ ...meta, previousClose: 1.5 }, '5y'), 1.5);
});

test('the latest trading day is the exchange\'s date, not UTC\'s', () => {
  // 23:30 UTC on 10 May is already 11 May in Tokyo and still 10 May in New York.
  const t = Date.UTC(2024, 4, 10, 23, 30) / 1000;
  assert.equal(exchangeDate(t, { exchangeTimezoneName: 'Asia/Tokyo' }), '2024-05-11');
  assert.equal(exchangeDate(t, { exchangeTimezoneName: 'America/New_York' }), '2024-05-10');
  assert.equal(exchangeDate(t, { gmtoffset: 32_400 }), '2024-05-11');
});
