// Yahoo chart bars read as Alpha Vantage rows: keys in the exchange's zone, empty bars skipped, Yahoo's
// repeated live bar replaced, weeks and months keyed by their last trading day, hours built from half hours.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftOf } from '../../../src/core/errors.js';
import { intervalBars } from '../../../src/upstreams/yahoo/chart-bars.js';
import { type ChartSeries, readChartSeries } from '../../../src/upstreams/yahoo/chart-series.js';
import { type ChartResult, chartResult } from '../../../src/upstreams/yahoo/parse-chart.js';
import type { Interval } from '../../../src/wire/alpha-vantage/indicators.js';
import { fixture } from '../../helpers/fixtures.js';

// Daily MSFT bars, 2024-04-29 to 2024-05-10 at 13:30 UTC (09:30 in New York): 05-07 empty (nulls), and
// 05-10 twice, the second stamped with regularMarketTime (20:00:01 UTC), as Yahoo repeats a live day.
const msft = () => chartResult(fixture('yahoo', 'chart-msft-daily-bars.json'), 'MSFT');

/** The chart read as the service stores it, then as the bars of `interval`. */
function chartBars(chart: ChartResult, interval: Interval, symbol: string) {
  return intervalBars(readChartSeries(chart, '1mo', interval.endsWith('min'), symbol).series, interval);
}

test("daily: one row per exchange day, the empty bar skipped, the repeated day's later bar kept", () => {
  const { bars, timeZone } = chartBars(msft(), 'daily', 'MSFT');
  assert.equal(timeZone, 'US/Eastern');
  assert.deepEqual(
    bars.map((b) => b.key),
    ['2024-04-29', '2024-04-30', '2024-05-01', '2024-05-02', '2024-05-03', '2024-05-06', '2024-05-08', '2024-05-09', '2024-05-10'],
  );
  assert.deepEqual(bars[0], { key: '2024-04-29', open: 401.49, high: 406.92, low: 399.87, close: 402.25, volume: 19582100 });
  assert.deepEqual(bars.at(-1), { key: '2024-05-10', open: 412.94, high: 415.38, low: 411.23, close: 414.74, volume: 13402300 });
});

test('weekly and monthly: aggregated from the days, keyed by the last trading day of the week or month', () => {
  const weekly = chartBars(msft(), 'weekly', 'MSFT').bars;
  assert.deepEqual(weekly, [
    {
      key: '2024-05-03',
      open: 401.49,
      high: 407.15,
      low: 388.44,
      close: 406.66,
      volume: 19582100 + 28781400 + 23562500 + 17709400 + 17446700,
    },
    { key: '2024-05-10', open: 408.76, high: 415.38, low: 405.76, close: 414.74, volume: 16996600 + 11792300 + 14689700 + 13402300 },
  ]);
  const monthly = chartBars(msft(), 'monthly', 'MSFT').bars;
  assert.deepEqual(
    monthly.map((b) => [b.key, b.open, b.close]),
    [
      ['2024-04-30', 401.49, 389.33],
      ['2024-05-10', 392.61, 414.74],
    ],
  );
});

test("intraday: `YYYY-MM-DD HH:MM` in the exchange's zone, bars without a close skipped", () => {
  // CL=F 5m bars from 04:00 UTC, midnight in New York (EDT); the last two have no close.
  const { bars } = chartBars(chartResult(fixture('yahoo', 'chart-null-closes.json'), 'CL=F'), '5min', 'CL=F');
  assert.deepEqual(bars, [
    { key: '2024-05-10 00:00', open: 79.1, high: 79.12, low: 79.0, close: 79.04, volume: 1200 },
    { key: '2024-05-10 00:05', open: 79.05, high: 79.08, low: 79.0, close: 79.01, volume: 980 },
  ]);
});

test("a chart without its exchange's time zone is an upstream error, not rows in a guessed zone", () => {
  const result = msft();
  delete result.meta.exchangeTimezoneName;
  assert.throws(
    () => chartBars(result, 'daily', 'MSFT'),
    (e: Error & { code?: string }) => e.code === 'UPSTREAM_ERROR',
  );
});

test('a chart without a usable exchange time zone is counted as chart-time-zone', () => {
  for (const exchangeTimezoneName of [undefined, 'Mars/Olympus_Mons']) {
    const chart = msft();
    const broken = { ...chart, meta: { ...chart.meta, exchangeTimezoneName } };
    assert.throws(
      () => chartBars(broken, 'daily', 'MSFT'),
      (e: unknown) => driftOf(e) === 'chart-time-zone',
      String(exchangeTimezoneName),
    );
  }
});

test("hours: the two half hours of each clock hour as one bar keyed by the hour's start, as Alpha Vantage's 60-minute bars run", () => {
  const half = (key: string, open: number, high: number, low: number, close: number, volume: number) => ({
    key,
    open,
    high,
    low,
    close,
    volume,
  });
  const bars = [
    half('2024-05-10 09:00', 10, 11, 9, 10.5, 100),
    half('2024-05-10 09:30', 10.5, 12, 10, 11.5, 300),
    half('2024-05-10 10:00', 11.5, 11.6, 11, 11.2, 50),
  ];
  const series: ChartSeries = {
    zone: 'America/New_York',
    keys: bars.map((b) => b.key),
    open: bars.map((b) => b.open),
    high: bars.map((b) => b.high),
    low: bars.map((b) => b.low),
    close: bars.map((b) => b.close),
    volume: bars.map((b) => b.volume),
    latest: { exchangeTimezoneName: 'America/New_York' },
  };
  assert.deepEqual(intervalBars(series, '60min').bars, [
    half('2024-05-10 09:00', 10, 12, 9, 11.5, 400),
    half('2024-05-10 10:00', 11.5, 11.6, 11, 11.2, 50),
  ]);
  assert.deepEqual(intervalBars(series, '30min').bars, bars);
});
