// Each recorded answer reads as what it says of its own freshness: the table of issue 33, over the recorded
// corpus (test/fixtures/recorded/), through the service's own parsers. The moment an answer was received is
// the recording's own (its recorder's timestamp or the response's Date header, in its `date`), never a
// clock of this test's choosing; a row without one says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Freshness } from '../../src/core/freshness.js';
import { parseSnapshot, snapshotToQuote } from '../../src/upstreams/ibkr/parse-snapshot.js';
import { mergeFields, parseStreamMessage, streamedQuote as ibkrStreamedQuote } from '../../src/upstreams/ibkr/parse-stream-message.js';
import { streamedQuote as dxlinkStreamedQuote, type SymbolFields } from '../../src/upstreams/tastytrade/parse-dxlink-message.js';
import { parseMarketData } from '../../src/upstreams/tastytrade/parse-market-data.js';
import { parseQuoteToken } from '../../src/upstreams/tastytrade/parse-quote-token.js';
import { readChartSeries } from '../../src/upstreams/yahoo/chart-series.js';
import { chartFreshness, chartResult, classifyChartResponse, tradingPeriodsOf } from '../../src/upstreams/yahoo/parse-chart.js';
import { seriesQuoteFreshness } from '../../src/upstreams/yahoo/parse-chart-quote.js';
import { type Loaded, recording } from '../helpers/recorded.js';

/** When the recorded answer was received: the time its `date` gives ("2026-04-28 07:48:19 UTC (…)"). */
function receivedAt(r: Loaded): number {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (?:UTC|GMT)\b/.exec(r.date);
  assert.ok(match !== null, `${r.name}: its date names no time of day (${r.date})`);
  return Date.parse(`${match[1]}T${match[2]}Z`);
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The snapshot row of `conid` in a recorded snapshot, as the service reads it, received when it was recorded
 * (a row with its own `_updated` needs no receipt time: `received` says whether the recording gives one).
 */
function snapshotFreshness(name: string, conid: number, received = true): Freshness {
  const r = recording('ibkr', name);
  const row = parseSnapshot(r.json).find((x) => x.conid === conid);
  assert.ok(row !== undefined, `${name}: no row for ${conid}`);
  return snapshotToQuote('X', row, received ? receivedAt(r) : Number.NaN).freshness;
}

/** One recorded websocket frame read as the service reads a subscription's first frame. */
function frameFreshness(name: string): Freshness {
  const message = parseStreamMessage(recording('ibkr', name).text);
  assert.equal(message.kind, 'market-data', name);
  if (message.kind !== 'market-data') throw new Error('unreachable');
  return ibkrStreamedQuote('X', message.conid, mergeFields(undefined, message.fields), message.updatedAt as number).freshness;
}

test('IBKR, delayed with a C-prefixed last price (DPB, "C267.61", live gateway 2026): the previous close, from the delayed feed', () => {
  const at = iso(receivedAt(recording('ibkr', 'snapshot-delayed-prior-close-2026')));
  // The recorder replaced _updated with a placeholder: the value stands as of its receipt.
  assert.deepEqual(snapshotFreshness('snapshot-delayed-prior-close-2026', 265598), { kind: 'prior-close', feed: 'delayed', asOf: at });
  assert.deepEqual(snapshotFreshness('snapshot-delayed-prior-close-2026', 272093), { kind: 'prior-close', feed: 'delayed', asOf: at });
  // SAP: "31": "N/A" and no 6509: nothing said.
  assert.deepEqual(snapshotFreshness('snapshot-delayed-prior-close-2026', 104747), { kind: 'unknown', asOf: at });
});

test('IBKR, frozen on a Saturday (ZB, no prefix, live gateway 2026): frozen, the market closed, from the real-time feed', () => {
  const at = iso(receivedAt(recording('ibkr', 'snapshot-frozen-saturday-2026')));
  assert.deepEqual(snapshotFreshness('snapshot-frozen-saturday-2026', 265598), {
    kind: 'frozen',
    market: 'closed',
    feed: 'realtime',
    asOf: at,
  });
});

test("IBKR, real-time: the documented snapshot (RpB) and a captured future's frame (RB); a delayed account's frame (DPB) is delayed", () => {
  assert.deepEqual(snapshotFreshness('snapshot-populated', 265598, false), { kind: 'realtime', asOf: iso(1712596911593) });
  assert.deepEqual(frameFreshness('ws-smd-future-2023'), { kind: 'realtime', asOf: iso(1678666665031) });
  assert.deepEqual(frameFreshness('ws-smd-first-aapl-2026'), { kind: 'delayed', asOf: iso(1777552110061) });
});

test("Tastytrade: a demo token's feed is delayed, an api token's real-time; REST market data is documented real-time", () => {
  const fields: SymbolFields = { last: 559.36 };
  const demo = parseQuoteToken(recording('tastytrade', 'api-quote-tokens-sandbox-demo-documented').json);
  assert.equal(demo.level, 'demo');
  assert.deepEqual(dxlinkStreamedQuote('SPY', fields, 1_000, demo.level).freshness, { kind: 'delayed', asOf: iso(1_000) });
  const api = parseQuoteToken(recording('tastytrade', 'api-quote-tokens-documented').json);
  assert.deepEqual(dxlinkStreamedQuote('SPY', fields, 1_000, api.level).freshness, { kind: 'realtime', asOf: iso(1_000) });
  // No level at all says nothing: never taken for real-time.
  assert.equal(dxlinkStreamedQuote('SPY', fields, 1_000, null).freshness.kind, 'unknown');
  const [btc] = parseMarketData(recording('tastytrade', 'market-data-by-type-btc-aapl-tsla').json, 0);
  assert.deepEqual(btc?.quote.freshness, { kind: 'realtime', asOf: '2025-04-29T21:33:25.130Z' }, 'as of its own updated-at');
});

/** A recorded chart's freshness as the parser reads its meta, received when it was recorded. */
function chartFreshnessOf(name: string, symbol: string): { freshness: Freshness; marketTime: number } {
  const r = recording('yahoo', name);
  const { meta } = chartResult(r.json, symbol);
  const marketTime = meta.regularMarketTime as number;
  return { freshness: chartFreshness(marketTime, tradingPeriodsOf(meta), receivedAt(r)), marketTime };
}

test('Yahoo, a chart of a closed market (AAPL, answered on a Saturday): end-of-day, market closed, asOf = regularMarketTime', () => {
  const { freshness, marketTime } = chartFreshnessOf('chart-aapl-period-2020-08-31-to-11-07-1d-split-dividend', 'AAPL');
  assert.deepEqual(freshness, { kind: 'end-of-day', market: 'closed', asOf: iso(marketTime * 1000) });
  // A Canadian mutual fund's chart of the same Saturday: its net asset value of Friday.
  const fund = chartFreshnessOf('chart-fund-0p000071w8-to-period-2020-01-01-to-03-1d', '0P000071W8.TO');
  assert.deepEqual(fund.freshness, { kind: 'end-of-day', market: 'closed', asOf: iso(fund.marketTime * 1000) });
});

test("Yahoo, the overview's own chart (range=1d, AAPL 2020): its session over, the next not begun: end-of-day, market closed", () => {
  const r = recording('yahoo', 'chart-aapl-1d-1d');
  // The recording names its day only; Yahoo answered after that day's close (regularMarketTime 21:00:01 UTC,
  // and currentTradingPeriod already the next day's), the moment the parser is given at the earliest.
  const classified = classifyChartResponse({ status: 200, headers: {}, json: r.json }, 'AAPL', '1d', Date.parse(r.date));
  assert.equal(classified.kind, 'data');
  if (classified.kind !== 'data') return;
  assert.deepEqual(classified.value.freshness, { kind: 'end-of-day', market: 'closed', asOf: '2020-03-02T21:00:01.000Z' });
});

test('Yahoo, charts answered in the session: live but of no stated delay (unknown), market regular', () => {
  for (const [name, symbol] of [
    ['chart-aapl-period-2022-02-22-1d', 'AAPL'],
    // Ten minutes and forty seconds behind its own Date header, and still no delay stated: unknown.
    ['chart-bz-f-period-2020-01-02-1d-mid-session', 'BZ=F'],
  ] as const) {
    const { freshness, marketTime } = chartFreshnessOf(name, symbol);
    assert.deepEqual(freshness, { kind: 'unknown', market: 'regular', asOf: iso(marketTime * 1000) }, name);
  }
});

test('the fallback quote from stored bars (a series stored from the closed market chart): end-of-day', () => {
  const r = recording('yahoo', 'chart-aapl-period-2020-08-31-to-11-07-1d-split-dividend');
  const { series } = readChartSeries(chartResult(r.json, 'AAPL'), '', false, 'AAPL');
  assert.deepEqual(seriesQuoteFreshness(series, receivedAt(r)), {
    kind: 'end-of-day',
    market: 'closed',
    asOf: iso((series.latest.regularMarketTime as number) * 1000),
  });
  // The same series refreshed while the session ran would be a live price of no stated delay, never end-of-day.
  const during = Date.UTC(2026, 9, 2, 15);
  assert.equal(
    seriesQuoteFreshness({ ...series, latest: { ...series.latest, regularMarketTime: during / 1000 - 60 } }, during).kind,
    'unknown',
  );
});
