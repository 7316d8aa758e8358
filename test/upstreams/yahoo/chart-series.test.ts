// A Yahoo chart read as a stored series, and a recent chart merged into it: the exchange's prices back from
// Yahoo's float32, a one-day chart's stated close before its bar, bars replaced where they overlap and
// appended after, and a series fetched again (rebase) rather than merged across a gap or a changed history.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ChartSeries,
  exchangePrice,
  mergeSeries,
  type ReadChart,
  readChartSeries,
  trimSeries,
} from '../../../src/upstreams/yahoo/chart-series.js';
import { chartResult } from '../../../src/upstreams/yahoo/parse-chart.js';
import { recording } from '../../helpers/recorded.js';

test("bar prices come back as the exchange printed them, from Yahoo's float32 (recorded values)", () => {
  // chart-aapl-1d-1d: open 282.2799987792969 is 282.28 as float32.
  assert.equal(exchangePrice(282.2799987792969, 2), 282.28);
  // chart-tnx-1d-5m (priceHint 4): one float32 step above 4.279's own float32.
  assert.equal(Math.fround(4.279) === 4.279000282287598, false);
  assert.equal(exchangePrice(4.279000282287598, 4), 4.279);
  // chart-btc-usd-...: more decimals than the hint of 2: the shortest decimal of that float32, not 7194.89.
  assert.equal(exchangePrice(7194.89208984375, 2), 7194.892);
  // chart-wsu-de-...: whole and float64 values are taken as sent.
  assert.equal(exchangePrice(34, 2), 34);
  assert.equal(exchangePrice(4.275, 4), 4.275);
  assert.equal(exchangePrice(0, 2), 0);
});

test('a recorded daily chart read as a series: keys in the exchange zone, prices restored, the latest meta kept', () => {
  const r = recording('yahoo', 'chart-aapl-period-2020-08-31-to-11-07-1d-split-dividend');
  const chart = chartResult(r.json, 'AAPL');
  const { series, closeBefore } = readChartSeries(chart, '', false, 'AAPL');
  const q = (r.json as any).chart.result[0].indicators.quote[0];
  assert.equal(series.keys.length, 49);
  assert.equal(series.keys[0], '2020-08-31');
  assert.deepEqual(series.close.slice(0, 3), [129.04, 134.18, 131.4]);
  assert.deepEqual(series.volume.slice(0, 3), q.volume.slice(0, 3));
  assert.equal(series.zone, 'America/New_York');
  assert.equal(series.latest.regularMarketPrice, chart.meta.regularMarketPrice);
  // A dated chart's chartPreviousClose (124.808) is the close before the window, adjusted: no previous session of it.
  assert.equal(closeBefore, undefined);
});

test("the recorded one-day chart states the previous session's close before its bar (chartPreviousClose of range=1d)", () => {
  const chart = chartResult(recording('yahoo', 'chart-aapl-1d-1d').json, 'AAPL');
  const read = readChartSeries(chart, '1d', false, 'AAPL');
  assert.deepEqual(read.series.keys, ['2020-03-02']);
  assert.equal(read.closeBefore, 273.36);
  // Asked over a longer range, the same number would be the close before that range: not stated.
  assert.equal(readChartSeries(chart, '5d', false, 'AAPL').closeBefore, undefined);
});

const ZONE = 'America/New_York';

function series(rows: [string, number, number?][], price = 0): ChartSeries {
  return {
    zone: ZONE,
    keys: rows.map(([key]) => key),
    open: rows.map(([, close, open]) => open ?? close),
    high: rows.map(([, close]) => close + 1),
    low: rows.map(([, close]) => close - 1),
    close: rows.map(([, close]) => close),
    volume: rows.map(() => 100),
    latest: { exchangeTimezoneName: ZONE, regularMarketPrice: price },
  };
}

const recent = (rows: [string, number, number?][], closeBefore?: number, price = 9): ReadChart => ({
  series: series(rows, price),
  closeBefore,
});

test('a recent chart replaces the bars it overlaps (the forming one too) and appends the new ones, its meta the latest', () => {
  const stored = series([
    ['2024-05-08', 10],
    ['2024-05-09', 11],
    ['2024-05-10', 12],
  ]);
  const merged = mergeSeries(
    stored,
    recent([
      ['2024-05-10', 12.5],
      ['2024-05-13', 13],
    ]),
  );
  assert.equal(merged.kind, 'merged');
  const { series: out } = merged as { series: ChartSeries };
  assert.deepEqual(out.keys, ['2024-05-08', '2024-05-09', '2024-05-10', '2024-05-13']);
  assert.deepEqual(out.close, [10, 11, 12.5, 13]);
  assert.equal(out.latest.regularMarketPrice, 9);
});

test('a bar the recent chart left out (a null there) stays; a recent chart without bars only brings its meta', () => {
  const stored = series([
    ['2024-05-10 09:30', 10],
    ['2024-05-10 09:35', 11],
    ['2024-05-10 09:40', 12],
  ]);
  const merged = mergeSeries(
    stored,
    recent([
      ['2024-05-10 09:30', 10],
      ['2024-05-10 09:40', 12.2],
      ['2024-05-10 09:45', 12.4],
    ]),
  );
  assert.deepEqual((merged as { series: ChartSeries }).series.keys, [
    '2024-05-10 09:30',
    '2024-05-10 09:35',
    '2024-05-10 09:40',
    '2024-05-10 09:45',
  ]);
  const empty = mergeSeries(stored, recent([]));
  assert.deepEqual((empty as { series: ChartSeries }).series.keys, stored.keys);
  assert.equal((empty as { series: ChartSeries }).series.latest.regularMarketPrice, 9);
});

test('a one-day chart after the stored bars joins them only when its close before is the stored last close: else no session is proven contiguous', () => {
  const stored = series([
    ['2024-05-09', 11],
    ['2024-05-10', 12],
  ]);
  const joined = mergeSeries(stored, recent([['2024-05-13', 13]], 12));
  assert.deepEqual((joined as { series: ChartSeries }).series.keys, ['2024-05-09', '2024-05-10', '2024-05-13']);
  // Compared as float32, the precision of Yahoo's bars: a meta price of the same float32 is the same close.
  assert.equal(mergeSeries(stored, recent([['2024-05-13', 13]], Math.fround(12))).kind, 'merged');
  assert.deepEqual(mergeSeries(stored, recent([['2024-05-14', 13]], 12.5)), { kind: 'rebase', reason: 'gap' });
  // An intraday chart states no close before: a new day does not join yesterday's bars.
  assert.deepEqual(mergeSeries(stored, recent([['2024-05-13', 13]])), { kind: 'rebase', reason: 'gap' });
});

test('a completed bar whose prices moved means the history changed (a split adjusts every past price): fetched again', () => {
  const stored = series([
    ['2024-05-08', 40],
    ['2024-05-09', 44],
    ['2024-05-10', 48],
  ]);
  assert.deepEqual(
    mergeSeries(
      stored,
      recent([
        ['2024-05-09', 11],
        ['2024-05-10', 12],
      ]),
    ),
    { kind: 'rebase', reason: 'changed' },
  );
  assert.deepEqual(
    mergeSeries(
      stored,
      recent([
        ['2024-05-09', 44, 43],
        ['2024-05-10', 12],
      ]),
    ),
    { kind: 'rebase', reason: 'changed' },
  );
  // Its volume revised, a completed bar is simply replaced.
  const revised = recent([
    ['2024-05-09', 44],
    ['2024-05-10', 48],
  ]);
  revised.series.volume = [999, 100];
  assert.deepEqual((mergeSeries(stored, revised) as { series: ChartSeries }).series.volume, [100, 999, 100]);
});

test('trimming keeps the bars from a date on', () => {
  const s = series([
    ['2024-05-08', 10],
    ['2024-05-09 09:30', 11],
    ['2024-05-10 09:30', 12],
  ]);
  assert.deepEqual(trimSeries(s, '2024-05-09').keys, ['2024-05-09 09:30', '2024-05-10 09:30']);
  assert.deepEqual(trimSeries(s, '2024-05-09').close, [11, 12]);
  assert.equal(trimSeries(s, '2024-05-01'), s);
  assert.deepEqual(trimSeries(s, '2024-06-01').keys, []);
});
