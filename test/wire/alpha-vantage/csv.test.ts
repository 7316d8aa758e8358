import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { csv, csvOf } from '../../../src/wire/alpha-vantage/csv.js';
import { fixture, fixtureText } from '../../helpers/fixtures.js';

const AV = 'recorded/alpha-vantage';
const header = (text: string) => text.split(/\r?\n/, 1)[0];
const rows = (text: string): string[][] => parse(text);

test('a quote renders with the recorded CSV columns, its values in the same order', () => {
  const body = fixture(AV, 'global-quote-msft.json');
  const text = csvOf(body)!;
  assert.equal(header(text), header(fixtureText(AV, 'global-quote-ibm.csv')));
  assert.deepEqual(rows(text)[1], Object.values(body['Global Quote']));
  assert.equal(csvOf({ 'Global Quote': {} }), `${header(text)}\r\n`, 'an unknown symbol: the header alone');
});

test('price series render with the recorded columns, newest first, one row per entry', () => {
  for (const name of ['time-series-daily-msft.json', 'time-series-monthly-msft.json', 'time-series-intraday-msft-1min.json']) {
    const body = fixture(AV, name);
    const text = csvOf(body)!;
    assert.equal(header(text), header(fixtureText(AV, 'time-series-monthly-ibm.csv')), name);
    const series = Object.entries(body[Object.keys(body)[1]!] as Record<string, Record<string, string>>);
    const parsed = rows(text).slice(1);
    assert.equal(parsed.length, series.length, name);
    assert.deepEqual(parsed[0], [series[0]![0], ...Object.values(series[0]![1])], name);
  }
  const adjusted = csvOf(fixture(AV, 'time-series-daily-adjusted-tsla.json'))!;
  assert.equal(header(adjusted), 'timestamp,open,high,low,close,adjusted_close,volume,dividend_amount,split_coefficient');
});

test('indicators put `time` before their own value names, in the order of the JSON answer', () => {
  assert.equal(header(csvOf(fixture(AV, 'macd-ibm-daily.json'))!), 'time,MACD,MACD_Signal,MACD_Hist');
  assert.equal(header(csvOf(fixture(AV, 'bbands-ibm-weekly.json'))!), 'time,Real Upper Band,Real Lower Band,Real Middle Band');
});

test('symbol search, `data` tables and date/value points', () => {
  const search = csvOf(fixture(AV, 'symbol-search-ba.json'))!;
  assert.equal(header(search), 'symbol,name,type,region,marketOpen,marketClose,timezone,currency,matchScore');
  const gdp = fixture(AV, 'real-gdp-annual.json');
  const points = rows(csvOf(gdp)!);
  assert.deepEqual(points[0], ['timestamp', 'value']);
  assert.deepEqual(points[1], [gdp.data[0].date, gdp.data[0].value]);
  const table = rows(
    csvOf({
      data: [
        { symbol: 'IBM', amount: '1.67', note: null },
        { symbol: 'IBM', extra: { a: 1 } },
      ],
    })!,
  );
  assert.deepEqual(table, [
    ['symbol', 'amount', 'note', 'extra'],
    ['IBM', '1.67', '', ''],
    ['IBM', '', '', '{"a":1}'],
  ]);
});

test('a lone record is one row; layouts Alpha Vantage answers in JSON only render nothing', () => {
  const rate = fixture(AV, 'currency-exchange-rate-usd-jpy.json');
  const parsed = rows(csvOf(rate)!);
  assert.equal(parsed[0]?.[0], 'From_Currency_Code');
  assert.deepEqual(parsed[1], Object.values(rate['Realtime Currency Exchange Rate']));
  for (const name of ['overview-tsla.json', 'news-sentiment-accd.json', 'income-statement-tsla.json'])
    assert.equal(csvOf(fixture(AV, name)), undefined, name);
});

test('values are quoted where they need it; lines end CRLF', () => {
  const text = csv(['name', 'note'], [['Apple, Inc.', 'say "hi"']]);
  assert.equal(text, 'name,note\r\n"Apple, Inc.","say ""hi"""\r\n');
  assert.deepEqual(rows(text)[1], ['Apple, Inc.', 'say "hi"']);
});
