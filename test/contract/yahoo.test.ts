// Every recorded Yahoo answer (test/fixtures/recorded/yahoo/) through the adapter's own pure functions, as
// each caller runs them: the overview's instrumentSnapshot (classifyChartResponse), the stored bar series'
// readChartSeries and the quote's fields as a one-day chart states them (test/helpers/chart-quote.ts, both
// through classifyChart), each told what the chart was asked for (a period1/period2 request has no range).
// Expected values are read from the recorded body here, never typed in. A recording no case here can place
// fails under its own name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ApiError, driftOf } from '../../src/core/errors.js';
import type { Interval } from '../../src/wire/alpha-vantage/indicators.js';
import { intervalBars } from '../../src/upstreams/yahoo/chart-bars.js';
import { readChartSeries } from '../../src/upstreams/yahoo/chart-series.js';
import { type ChartAsk, chartQuote } from '../helpers/chart-quote.js';
import {
  type ChartResponse,
  type Classified,
  categoryOf,
  classifyChart,
  classifyChartResponse,
} from '../../src/upstreams/yahoo/parse-chart.js';
import { displayName } from '../../src/upstreams/yahoo/display-name.js';
import { corpusFiles, type Loaded, recordings } from '../helpers/recorded.js';

type Json = Record<string, any>;

const CHART_PATH = /^\/v8\/finance\/chart\/([^/]+)$/;

/** Yahoo's bar intervals as the Alpha Vantage intervals a series of them serves. */
const AV_INTERVAL: Record<string, Interval> = {
  '1m': '1min',
  '5m': '5min',
  '15m': '15min',
  '30m': '30min',
  '60m': '60min',
  '1h': '60min',
  '1d': 'daily',
};

/** Our categories for Yahoo's instrument types (overview-source.ts). */
const CATEGORY: Record<string, string> = {
  INDEX: 'index',
  FUTURE: 'commodity',
  CRYPTOCURRENCY: 'crypto',
  CURRENCY: 'currency',
  EQUITY: 'equity',
  ETF: 'equity',
  // A mutual fund is no equity (recorded 0P0000XTS7, 0P000071W8.TO).
  MUTUALFUND: 'fund',
};

/**
 * The name a chart gives: shortName when it is a plain name, else longName. Recorded shortNames that are not:
 * the symbol itself (0P000071W8.TO), a truncated field padded with a fragment (WSU.DE "WashTec AG   …   I").
 */
function expectedName(meta: Json, symbol: string): string | null {
  const plain = (n: unknown) =>
    typeof n === 'string' && n.trim() !== '' && !/\s{2,}/.test(n.trim()) && n.trim().toUpperCase() !== symbol.toUpperCase();
  const name = [meta.shortName, meta.longName].find(plain);
  return name === undefined ? null : (name as string).trim();
}

const response = (r: Loaded): ChartResponse => ({ status: r.status, headers: {}, json: r.json });

interface ExpectedBar {
  key: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number | undefined;
}

/**
 * The bars a chart holds, read from the raw arrays: a bar with any of open/high/low/close null skipped,
 * keyed by its time shifted by the exchange's `gmtoffset` (a different route to the day than the adapter's
 * zone name; for these recordings the offset is the one in force at each bar), a repeated key replacing the
 * earlier bar (a stored series) or kept beside it (the quote's day bar is the first of the day).
 */
function barsOf(result: Json, intraday: boolean, repeated: 'replace' | 'keep' = 'replace'): ExpectedBar[] {
  const quote = (result.indicators?.quote?.[0] ?? {}) as Json;
  const offset = Number(result.meta.gmtoffset ?? 0);
  const bars: ExpectedBar[] = [];
  ((result.timestamp ?? []) as number[]).forEach((t, i) => {
    const [open, high, low, close, volume] = ['open', 'high', 'low', 'close', 'volume'].map((k) => quote[k]?.[i]);
    if ([open, high, low, close].some((v) => typeof v !== 'number')) return;
    const iso = new Date((t + offset) * 1000).toISOString();
    const key = intraday ? iso.slice(0, 16).replace('T', ' ') : iso.slice(0, 10);
    const bar = { key, open, high, low, close, volume: typeof volume === 'number' ? volume : undefined };
    if (repeated === 'replace' && bars.at(-1)?.key === key) bars[bars.length - 1] = bar;
    else bars.push(bar);
  });
  return bars;
}

/** UPSTREAMS.md: previousClose or regularMarketPreviousClose, else chartPreviousClose only when range=1d. */
function previousCloseRule(meta: Json, range: string): number | undefined {
  return meta.previousClose ?? meta.regularMarketPreviousClose ?? (range === '1d' ? meta.chartPreviousClose : undefined);
}

function expectDrift<T>(classified: Classified<T>, drift: string, name: string): void {
  assert.equal(classified.kind, 'error', `${name}: expected ${drift}, got ${JSON.stringify(classified).slice(0, 300)}`);
  const error = (classified as { error: ApiError }).error;
  assert.equal(error.code, 'UPSTREAM_ERROR', name);
  assert.equal(driftOf(error), drift, `${name}: ${error.message}`);
}

function expectValue<T>(classified: Classified<T>, name: string): T {
  assert.equal(classified.kind, 'data', `${name}: ${classified.kind === 'error' ? classified.error.message : classified.kind}`);
  return (classified as { value: T }).value;
}

const four = (n: number) => (Math.round(n * 10_000) / 10_000).toFixed(4);

/** Every chart, whether or not it gives a snapshot, names and categorises its instrument as the rules above say. */
function checkIdentity(r: Loaded, symbol: string, result: Json): void {
  const meta = result.meta as Json;
  assert.equal(displayName(meta.shortName, meta.longName, symbol), expectedName(meta, symbol), `${r.name} name`);
  assert.equal(categoryOf(meta.instrumentType, symbol), CATEGORY[String(meta.instrumentType).toUpperCase()], `${r.name} category`);
}

function checkSnapshot(r: Loaded, symbol: string, asked: ChartAsk, result: Json): void {
  const meta = result.meta as Json;
  // Answered on the recording's day: how fresh that makes it is read in test/contract/freshness.test.ts.
  const classified = classifyChartResponse(response(r), symbol, asked.range, Date.parse(r.date.slice(0, 10)));
  const previousClose = previousCloseRule(meta, asked.range);
  if (previousClose === undefined) return expectDrift(classified, 'chart-no-previous-close', `${r.name} snapshot`);
  const { freshness, ...snapshot } = expectValue(classified, `${r.name} snapshot`);
  assert.equal(freshness.asOf, new Date(meta.regularMarketTime * 1000).toISOString(), `${r.name} freshness as of regularMarketTime`);
  const closes = ((result.indicators?.quote?.[0]?.close ?? []) as (number | null)[]).filter((c): c is number => typeof c === 'number');
  assert.deepEqual(
    snapshot,
    {
      symbol: symbol.toUpperCase(),
      price: meta.regularMarketPrice ?? closes.at(-1),
      previousClose,
      currency: meta.currency,
      name: expectedName(meta, symbol),
      category: CATEGORY[String(meta.instrumentType).toUpperCase()],
      asOf: new Date(meta.regularMarketTime * 1000).toISOString(),
    },
    r.name,
  );
}

function checkQuote(r: Loaded, symbol: string, asked: ChartAsk, result: Json, intraday: boolean): void {
  const meta = result.meta as Json;
  const classified = classifyChart(response(r), symbol, (chart) => chartQuote(chart, symbol, `${symbol}.CALLER`, asked));
  const previous = previousCloseRule(meta, asked.range);
  if (previous === undefined) return expectDrift(classified, 'chart-no-previous-close', `${r.name} quote`);
  const day = new Date((meta.regularMarketTime + Number(meta.gmtoffset ?? 0)) * 1000).toISOString().slice(0, 10);
  const dayBars = barsOf(result, intraday, 'keep').filter((b) => b.key.startsWith(day));
  if (dayBars.length === 0) return expectDrift(classified, 'chart-no-day-bar', `${r.name} quote`);
  const quote = expectValue(classified, `${r.name} quote`)['Global Quote'];
  // A daily chart's day is its (first) bar of the day; an intraday chart's, its bars of the day together.
  const [first] = dayBars as [ExpectedBar];
  const dayHigh = meta.regularMarketDayHigh ?? (intraday ? Math.max(...dayBars.map((b) => b.high)) : first.high);
  const dayLow = meta.regularMarketDayLow ?? (intraday ? Math.min(...dayBars.map((b) => b.low)) : first.low);
  const barVolume = intraday
    ? dayBars.reduce<number | undefined>((sum, b) => (b.volume === undefined ? sum : (sum ?? 0) + b.volume), undefined)
    : first.volume;
  const price = meta.regularMarketPrice as number;
  const change = Number(four(price)) - Number(four(previous));
  assert.deepEqual(
    quote,
    {
      '01. symbol': `${symbol}.CALLER`,
      '02. open': four(first.open),
      // Widened to hold the price: recorded ^TNX has its price above regularMarketDayHigh.
      '03. high': four(Math.max(dayHigh, price)),
      '04. low': four(Math.min(dayLow, price)),
      '05. price': four(price),
      '06. volume': String(Math.round(meta.regularMarketVolume ?? barVolume ?? 0)),
      '07. latest trading day': day,
      '08. previous close': four(previous),
      '09. change': four(change),
      '10. change percent': `${four(previous === 0 ? 0 : (change / Number(four(previous))) * 100)}%`,
    },
    r.name,
  );
}

/**
 * A bar price as stored: Yahoo sends float32 numbers (282.2799987792969 for 282.28), read back as the price
 * at the chart's priceHint decimals when the number is that price's float32 give or take one float32 step
 * (relative 2^-23), else as a short decimal of the same float32; a number that is no float32 as sent.
 */
function assertStoredPrice(actual: number, sent: number, hint: number, where: string): void {
  if (Math.fround(sent) !== sent) return assert.equal(actual, sent, where);
  const printed = Number(sent.toFixed(hint));
  if (Math.abs(Math.fround(printed) - sent) <= Math.abs(sent) * 2 ** -23) return assert.equal(actual, printed, where);
  assert.equal(Math.fround(actual), sent, where);
  assert.equal(Number(actual.toPrecision(9)), actual, `${where}: a short decimal`);
}

function checkBars(r: Loaded, symbol: string, asked: ChartAsk, result: Json, interval: Interval, intraday: boolean): void {
  const classified = classifyChart(response(r), symbol, (chart) =>
    intervalBars(readChartSeries(chart, asked.range, intraday, symbol).series, interval),
  );
  const { bars, timeZone } = expectValue(classified, `${r.name} bars`);
  const expected = barsOf(result, intraday);
  // Bars count = the non-null bars (none at all for a chart without `timestamp`, `quote: [{}]`).
  assert.equal(bars.length, expected.length, r.name);
  const hint = Number(result.meta.priceHint);
  bars.forEach((bar, i) => {
    const sent = expected[i] as ExpectedBar;
    assert.equal(bar.key, sent.key, r.name);
    assert.equal(bar.volume, sent.volume ?? 0, `${r.name} ${bar.key} volume`);
    for (const field of ['open', 'high', 'low', 'close'] as const)
      assertStoredPrice(bar[field], sent[field], hint, `${r.name} ${bar.key} ${field}`);
  });
  const zone = result.meta.exchangeTimezoneName as string;
  assert.equal(timeZone, zone === 'America/New_York' ? 'US/Eastern' : zone, r.name);
}

function checkRecording(r: Loaded): void {
  if (r.status === 429) {
    // Yahoo's edge refuses before any endpoint answers (recorded on the crumb call, before a chart call):
    // whatever the body, a chart call met with it is a refusal with the default back-off.
    for (const classified of [classifyChartResponse(response(r), 'AAPL'), classifyChart(response(r), 'AAPL', () => 0)]) {
      assert.deepEqual(classified, { kind: 'refusal', message: 'Yahoo refused the call: too many requests', retryAfterMs: 60_000 }, r.name);
    }
    return;
  }
  const match = CHART_PATH.exec(r.request.path);
  assert.ok(
    match !== null,
    `${r.name}: ${r.request.method} ${r.request.path} (status ${r.status}) is not a chart answer, and no case here places it`,
  );
  const symbol = decodeURIComponent(match[1] as string);
  if (r.status === 404) {
    assert.equal((classifyChartResponse(response(r), symbol) as { error?: ApiError }).error?.code, 'SYMBOL_NOT_FOUND', r.name);
    return;
  }
  assert.equal(r.status, 200, `${r.name}: no case here places a chart answer of status ${r.status}`);
  const query = r.request.query ?? {};
  // A period1/period2 request names no range: its chartPreviousClose is the close before the period.
  assert.ok(
    (query.range === undefined) !== (query.period1 === undefined),
    `${r.name}: a chart asked with range or with period1, not both or neither`,
  );
  const asked: ChartAsk = { range: query.range ?? '', interval: query.interval ?? '1d' };
  const interval = AV_INTERVAL[asked.interval];
  assert.ok(interval !== undefined, `${r.name}: no case here reads ${asked.interval} bars`);
  const result = (r.json as Json).chart.result[0] as Json;
  const intraday = !/^\d+(d|wk|mo)$/.test(asked.interval);
  assert.equal(result.meta.dataGranularity, asked.interval, `${r.name}: the chart is of the interval asked`);
  checkIdentity(r, symbol, result);
  checkSnapshot(r, symbol, asked, result);
  checkQuote(r, symbol, asked, result, intraday);
  checkBars(r, symbol, asked, result, interval, intraday);
}

describe('Yahoo adapter over the recorded corpus', () => {
  for (const r of recordings('yahoo')) {
    test(r.name, () => checkRecording(r));
  }

  test('every body file of the corpus is listed in recordings.json (so none escapes the cases above)', () => {
    const listed = new Set(recordings('yahoo').map((r) => r.body));
    const unlisted = corpusFiles('yahoo').filter((f) => f !== 'recordings.json' && f !== 'SOURCES.md' && !listed.has(f));
    assert.deepEqual(unlisted, []);
  });

  test('the cases can fail: expectations read from a different body, an unplaceable path', () => {
    const gold = recordings('yahoo').find((r) => r.name === 'chart-gc-f-period-2020-01-02-1d') as Loaded;
    const other = structuredClone((gold.json as Json).chart.result[0]) as Json;
    other.indicators.quote[0].close[0] += 1;
    assert.throws(() => checkBars(gold, 'GC=F', { range: '', interval: '1d' }, other, 'daily', false), /chart-gc-f/);
    other.meta.regularMarketPrice += 1;
    assert.throws(() => checkSnapshot(gold, 'GC=F', { range: '1d', interval: '1d' }, other), /chart-gc-f/);
    assert.throws(() => checkRecording({ ...gold, request: { ...gold.request, path: '/v7/finance/quote' } }), /no case here places it/);
  });
});
