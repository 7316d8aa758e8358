// The Yahoo quote read from stored daily bars (seriesQuote), held to the recorded one-day chart rules of
// UPSTREAMS.md: daily charts carry no previousClose; a one-day range's chartPreviousClose is the previous
// session's close (recorded AAPL 2020-03-02: 273.36, the 2020-02-28 close); any longer or dated range's is
// the close before that range. A quote from bars takes its previous close from the bar before the day,
// which equals what the one-day chart states, and never a longer chart's chartPreviousClose. Expected
// values are read from the recorded bodies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftOf } from '../../src/core/errors.js';
import { type ChartSeries, mergeSeries, readChartSeries } from '../../src/upstreams/yahoo/chart-series.js';
import { chartResult } from '../../src/upstreams/yahoo/parse-chart.js';
import { seriesQuote } from '../../src/upstreams/yahoo/parse-chart-quote.js';
import { chartQuote } from '../helpers/chart-quote.js';
import { recording } from '../helpers/recorded.js';

const oneDay = () => chartResult(recording('yahoo', 'chart-aapl-1d-1d').json, 'AAPL');
const dated = () => chartResult(recording('yahoo', 'chart-aapl-period-2020-08-31-to-11-07-1d-split-dividend').json, 'AAPL');

/** A stored series ending with the session before the recorded day, closing at `close`: what the service held. */
function storedBefore(close: number): ChartSeries {
  return {
    zone: 'America/New_York',
    keys: ['2020-02-27', '2020-02-28'],
    open: [280, 270],
    high: [281, 275],
    low: [270, 260],
    close: [275.5, close],
    volume: [1, 2],
    latest: { exchangeTimezoneName: 'America/New_York' },
  };
}

test("the recorded one-day chart extends stored bars whose last close is its chartPreviousClose; the quote is the one-day chart's own", () => {
  const chart = oneDay();
  const stated = chart.meta.chartPreviousClose as number;
  const merged = mergeSeries(storedBefore(stated), readChartSeries(chart, '1d', false, 'AAPL'));
  assert.equal(merged.kind, 'merged');
  const { series } = merged as { series: ChartSeries };
  assert.deepEqual(series.keys, ['2020-02-27', '2020-02-28', '2020-03-02']);
  const fromBars = seriesQuote(series, 'AAPL', 'AAPL')['Global Quote'];
  const fromChart = chartQuote(chart, 'AAPL', 'AAPL')['Global Quote'];
  assert.deepEqual(fromBars, fromChart);
  assert.equal(fromBars['08. previous close'], stated.toFixed(4));
  assert.equal(fromBars['07. latest trading day'], '2020-03-02');
  // Stored bars ending on another close leave a session unproven between: the series is fetched whole again.
  assert.deepEqual(mergeSeries(storedBefore(stated + 1), readChartSeries(chart, '1d', false, 'AAPL')), { kind: 'rebase', reason: 'gap' });
});

test("bars of a dated chart: each day's previous close is the bar before, never the chart's chartPreviousClose", () => {
  const chart = dated();
  const { series } = readChartSeries(chart, '', false, 'AAPL');
  const q = (chart.result as any).indicators.quote[0];
  const timestamps = chart.result.timestamp as number[];
  for (const k of [1, 10, 48]) {
    // The latest meta as a refresh on that day's close would bring it.
    const day = { ...series, latest: { ...series.latest, regularMarketTime: (timestamps[k] as number) + 6.5 * 3600 } };
    const quote = seriesQuote(day, 'AAPL', 'AAPL')['Global Quote'];
    assert.equal(quote['07. latest trading day'], series.keys[k]);
    assert.equal(quote['08. previous close'], Number(q.close[k - 1].toFixed(2)).toFixed(4), series.keys[k]);
    assert.equal(quote['02. open'], Number(q.open[k].toFixed(2)).toFixed(4), series.keys[k]);
  }
  // The first bar has no bar before it in the series: no quote, rather than chartPreviousClose (124.808, the
  // split-adjusted close before the window).
  const first = { ...series, latest: { ...series.latest, regularMarketTime: (timestamps[0] as number) + 3600 } };
  assert.throws(
    () => seriesQuote(first, 'AAPL', 'AAPL'),
    (e: unknown) => driftOf(e) === 'chart-no-previous-close',
  );
});

test('no bar of the day, or a previous bar more than a week before it, is no quote', () => {
  const { series } = readChartSeries(dated(), '', false, 'AAPL');
  const today = Date.parse('2020-11-09T15:00:00Z') / 1000; // a Monday after the window's last bar
  assert.throws(
    () => seriesQuote({ ...series, latest: { ...series.latest, regularMarketTime: today } }, 'AAPL', 'AAPL'),
    (e: unknown) => driftOf(e) === 'chart-no-day-bar',
  );
  const gap: ChartSeries = { ...series, keys: [...series.keys.slice(0, -1), '2020-11-20'] };
  const late = Date.parse('2020-11-20T20:00:00Z') / 1000;
  assert.throws(
    () => seriesQuote({ ...gap, latest: { ...gap.latest, regularMarketTime: late } }, 'AAPL', 'AAPL'),
    (e: unknown) => driftOf(e) === 'chart-no-previous-close',
  );
});
