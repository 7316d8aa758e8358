import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiError, driftOf } from '../../../src/core/errors.js';
import { seriesParams } from '../../../src/upstreams/alpha-vantage/alpha-vantage-client.js';
import { classifyAlphaVantageBody } from '../../../src/upstreams/alpha-vantage/classify-body.js';
import { parseTimeSeries } from '../../../src/upstreams/alpha-vantage/parse-time-series.js';
import { fixture } from '../../helpers/fixtures.js';

const upstreamError = (e: ApiError) => e.code === 'UPSTREAM_ERROR';

test('a daily series keeps the upstream shape and values as sent, newest first', () => {
  const raw = fixture('alpha-vantage', 'time-series-daily-ibm.json');
  const body = parseTimeSeries(raw, 'TIME_SERIES_DAILY');
  assert.deepEqual(body, raw);
  assert.deepEqual(Object.keys(body['Time Series (Daily)']!), ['2024-05-10', '2024-05-09', '2024-05-08']);
});

test('intraday rows are keyed by date-time under "Time Series (<interval>)"; a zero volume is fine', () => {
  const body = parseTimeSeries(fixture('alpha-vantage', 'time-series-intraday-5min.json'), 'TIME_SERIES_INTRADAY', '5min');
  assert.equal(body['Time Series (5min)']!['2024-05-10 19:50:00']!['5. volume'], '0');
  assert.throws(
    () => parseTimeSeries(fixture('alpha-vantage', 'time-series-intraday-5min.json'), 'TIME_SERIES_INTRADAY', '1min'),
    upstreamError,
  );
  assert.throws(() => parseTimeSeries(fixture('alpha-vantage', 'time-series-intraday-5min.json'), 'TIME_SERIES_DAILY'), upstreamError);
});

test('weekly and monthly series have their own section names and no output size', () => {
  const weekly = parseTimeSeries(fixture('alpha-vantage', 'time-series-weekly-ibm.json'), 'TIME_SERIES_WEEKLY');
  assert.equal(Object.keys(weekly['Weekly Time Series']!).length, 2);
  const monthly = parseTimeSeries(fixture('alpha-vantage', 'time-series-monthly-ibm.json'), 'TIME_SERIES_MONTHLY');
  assert.equal(monthly['Monthly Time Series']!['2024-04-30']!['3. low'], '165.2605');
  assert.throws(() => parseTimeSeries(fixture('alpha-vantage', 'time-series-weekly-ibm.json'), 'TIME_SERIES_MONTHLY'), upstreamError);
});

test('a new listing with no rows yet is an empty series, not an error', () => {
  const body = parseTimeSeries(fixture('alpha-vantage', 'time-series-daily-new-listing.json'), 'TIME_SERIES_DAILY');
  assert.deepEqual(body['Time Series (Daily)'], {});
});

test('a row with a non-number, a missing field, a negative value or a bad date is an upstream error', () => {
  assert.throws(
    () => parseTimeSeries(fixture('alpha-vantage', 'time-series-daily-malformed-row.json'), 'TIME_SERIES_DAILY'),
    upstreamError,
  );
  const mutate = (edit: (rows: Record<string, Record<string, string>>) => void) => {
    const raw = fixture('alpha-vantage', 'time-series-daily-ibm.json');
    edit(raw['Time Series (Daily)']);
    return () => parseTimeSeries(raw, 'TIME_SERIES_DAILY');
  };
  assert.throws(
    mutate((rows) => delete rows['2024-05-09']!['5. volume']),
    upstreamError,
  );
  assert.throws(
    mutate((rows) => (rows['2024-05-09']!['3. low'] = '-1.0000')),
    upstreamError,
  );
  assert.throws(
    mutate((rows) => (rows['10/05/2024'] = rows['2024-05-09']!)),
    upstreamError,
  );
  assert.throws(() => parseTimeSeries({ 'Time Series (Daily)': {} }, 'TIME_SERIES_DAILY'), upstreamError);
});

test('an unknown symbol is the Error Message body, classified before parsing', () => {
  const classified = classifyAlphaVantageBody(fixture('alpha-vantage', 'error-invalid-call.json'));
  assert.equal(classified.kind, 'error');
});

test('only the parameters each function takes are sent', () => {
  assert.deepEqual(seriesParams({ fn: 'TIME_SERIES_WEEKLY', symbol: 'IBM', outputsize: 'full' }), {
    function: 'TIME_SERIES_WEEKLY',
    symbol: 'IBM',
  });
  assert.deepEqual(seriesParams({ fn: 'TIME_SERIES_DAILY', symbol: 'IBM' }), {
    function: 'TIME_SERIES_DAILY',
    symbol: 'IBM',
    outputsize: 'compact',
  });
  assert.deepEqual(seriesParams({ fn: 'TIME_SERIES_INTRADAY', symbol: 'IBM', interval: '1min', outputsize: 'full', month: '2024-01' }), {
    function: 'TIME_SERIES_INTRADAY',
    symbol: 'IBM',
    outputsize: 'full',
    interval: '1min',
    month: '2024-01',
  });
});

test('each shape failure is counted under its own reason', () => {
  const reason = (drift: string) => (e: unknown) => driftOf(e) === drift;
  assert.throws(
    () => parseTimeSeries(fixture('alpha-vantage', 'time-series-daily-malformed-row.json'), 'TIME_SERIES_DAILY'),
    reason('series-row'),
  );
  assert.throws(() => parseTimeSeries({ 'Time Series (Daily)': {} }, 'TIME_SERIES_DAILY'), reason('series-meta'));
  assert.throws(() => parseTimeSeries(fixture('alpha-vantage', 'time-series-weekly-ibm.json'), 'TIME_SERIES_MONTHLY'), reason('no-series'));
});
