// Computed indicators equal provider A's where both are computed from the same bars. The simulators serve
// the same bars for a symbol and minute (src/sandbox/session-bars.ts; first checked here bar by bar: Alpha
// Vantage's series against Yahoo's chart as the service stores it), so the service's computed answer
// (TECHNICAL_SOURCE=computed, from Yahoo's chart) must equal the Alpha Vantage simulator's answer to the same
// call, row for row, as strings: no tolerance. What makes them equal is the service's doing: Yahoo's float32
// prices read back as printed, intraday charts asked with their pre- and post-market (Alpha Vantage's
// sessions), 60-minute bars built from 30-minute ones (Yahoo's 60m start at 09:30), weeks and months keyed
// by their last session. The clock is held on a whole minute so both cut the newest bar at the same instant;
// Yahoo's odd empty intraday bar is switched off (noEmptyBars), since a bar one provider lacks changes every
// value whose window holds it. Cumulative indicators (OBV, AD) are sums from the first bar a provider holds
// and differ by that start; they are compared by their changes. Monthly indicators are compared where
// their window is the whole story (SMA, BBANDS): ten years of daily bars are 120 months, too short a run-in
// for a seeded average (RSI, MACD) to settle to provider A's last decimal, which is why TECHNICAL_SOURCE=auto
// asks provider A for those.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { intervalBars } from '../../../src/upstreams/yahoo/chart-bars.js';
import { INTERVAL_SERIES, SERIES_SPANS } from '../../../src/upstreams/yahoo/chart-spans.js';
import { readChartSeries } from '../../../src/upstreams/yahoo/chart-series.js';
import { chartResult } from '../../../src/upstreams/yahoo/parse-chart.js';
import { BROWSER_USER_AGENT } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { indicatorSpec, type Interval, sectionKey } from '../../../src/wire/alpha-vantage/indicators.js';
import { httpGet, startApp } from '../../helpers/app.js';
import { PREMIUM_PLAN } from '../../helpers/config.js';

/** Tuesday 2026-11-17 11:30 in New York (standard time), and a summer day's 08:15, in the pre-market. */
const CLOCKS = { november: Date.parse('2026-11-17T16:30:00Z'), mayPreMarket: Date.parse('2026-05-12T12:15:00Z') };
const OPEN_PLAN = { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0, plan: 'premium' } as const;

async function sandboxAt(t: Parameters<typeof startApp>[0], now: number) {
  const running = await startApp(t, {
    env: { QUOTE_FALLBACK: 'yahoo', TECHNICAL_SOURCE: 'computed', ...PREMIUM_PLAN },
    sandbox: { now: () => now, alphaVantage: OPEN_PLAN },
  });
  running.sandbox.yahoo.setQuirks({ noEmptyBars: true });
  const provider = async (params: Record<string, string>) =>
    (
      await httpGet(
        `${running.sandbox.alphaVantage.origin}/query?${new URLSearchParams({ ...params, apikey: SANDBOX_CREDENTIALS.alphaVantageKey })}`,
      )
    ).body;
  return { ...running, provider };
}

/** Alpha Vantage's call for an indicator, with the parameters the real API requires spelled out. */
function providerCall(fn: string, symbol: string, interval: Interval, timePeriod?: number): Record<string, string> {
  const spec = indicatorSpec(fn);
  const call: Record<string, string> = { function: fn, symbol, interval };
  if (spec?.timePeriod !== null) call.time_period = String(timePeriod ?? spec?.timePeriod);
  if (spec?.seriesType) call.series_type = 'close';
  return call;
}

test("the simulators' bars are the same: Alpha Vantage's series and Yahoo's chart as the service stores it", async (t) => {
  for (const [name, now] of Object.entries(CLOCKS)) {
    const { sandbox, provider } = await sandboxAt(t, now);
    const cases: [string, Interval, string][] = [
      ['TIME_SERIES_DAILY', 'daily', 'Time Series (Daily)'],
      ['TIME_SERIES_INTRADAY', '5min', 'Time Series (5min)'],
      ['TIME_SERIES_INTRADAY', '60min', 'Time Series (60min)'],
    ];
    for (const [fn, interval, section] of cases) {
      const intraday = interval !== 'daily';
      const series = (await provider({ function: fn, symbol: 'MSFT', interval, outputsize: 'full' }))[section] as Record<
        string,
        Record<string, string>
      >;
      const size = INTERVAL_SERIES[interval].size;
      const span = SERIES_SPANS[size];
      const chart = await httpGet(
        `${sandbox.yahoo.origin}${chartPath('MSFT')}?range=${span.range}&interval=${size}${span.prePost ? '&includePrePost=true' : ''}`,
        { 'user-agent': BROWSER_USER_AGENT },
      );
      const { bars } = intervalBars(readChartSeries(chartResult(chart.body, 'MSFT'), span.range, intraday, 'MSFT').series, interval);
      // Each reaches back as far as it does: over the span both cover, every bar of one is a bar of the other.
      const keys = Object.keys(series).map((key) => key.slice(0, 16));
      const from = [bars[0]?.key as string, keys.at(-1) as string].sort().at(-1) as string;
      const shared = bars.filter((bar) => bar.key >= from);
      assert.ok(shared.length >= 300, `${name} ${interval}: ${shared.length} bars compared`);
      assert.equal(shared.length, keys.filter((key) => key >= from).length, `${name} ${interval}: the same bars`);
      for (const bar of shared) {
        const row = series[intraday ? `${bar.key}:00` : bar.key];
        assert.deepEqual(
          [bar.open, bar.high, bar.low, bar.close].map((v) => v.toFixed(4)).concat(String(bar.volume)),
          [row?.['1. open'], row?.['2. high'], row?.['3. low'], row?.['4. close'], row?.['5. volume']],
          `${name} ${interval} ${bar.key}`,
        );
      }
    }
  }
});

const CASES: [fn: string, interval: Interval, timePeriod?: number][] = [
  ['RSI', 'daily', 14],
  ['MACD', 'daily'],
  ['BBANDS', 'daily', 20],
  ['SMA', 'daily', 50],
  ['EMA', 'daily', 20],
  ['STOCH', 'daily'],
  ['ADX', 'daily', 14],
  ['CCI', 'daily', 20],
  ['WILLR', 'daily', 14],
  ['MFI', 'daily', 14],
  ['ADOSC', 'daily'],
  ['SMA', 'weekly', 10],
  ['MACD', 'weekly'],
  ['SMA', 'monthly', 10],
  ['BBANDS', 'monthly', 20],
  ['RSI', '1min', 14],
  ['MACD', '5min'],
  ['BBANDS', '15min', 20],
  ['EMA', '30min', 20],
  ['SMA', '60min', 10],
  ['STOCH', '60min'],
];

test('computed indicators equal provider A, row for row, as strings: daily, weekly, monthly and every intraday interval', async (t) => {
  for (const [name, now] of Object.entries(CLOCKS)) {
    const { get, provider } = await sandboxAt(t, now);
    for (const [fn, interval, timePeriod] of CASES) {
      const call = providerCall(fn, 'MSFT', interval, timePeriod);
      const query = new URLSearchParams({ ...call, apikey: 'ignored' });
      const computed = await get(`/api/provider-a/query?${query}`);
      assert.equal(computed.status, 200, `${name} ${fn} ${interval}: ${computed.text}`);
      assert.equal(computed.headers['x-data-source'], 'yahoo');
      const theirs = await provider(call);
      const label = `${name} ${fn} ${interval}`;
      assert.deepEqual(computed.body['Meta Data'], theirs['Meta Data'], label);
      const ours = computed.body[sectionKey(fn)] as Record<string, unknown>;
      const rows = theirs[sectionKey(fn)] as Record<string, unknown>;
      assert.ok(Object.keys(rows).length >= 60, `${label}: ${Object.keys(rows).length} rows`);
      assert.deepEqual(ours, rows, label);
    }
  }
});

test('cumulative indicators (OBV, AD) differ by where each history starts; their changes are equal', async (t) => {
  const { get, provider } = await sandboxAt(t, CLOCKS.november);
  for (const [fn, key] of [
    ['OBV', 'OBV'],
    ['AD', 'Chaikin A/D'],
  ] as const) {
    const call = providerCall(fn, 'MSFT', 'daily');
    const ours = Object.entries((await get(`/api/provider-a/query?${new URLSearchParams(call)}`)).body[sectionKey(fn)]) as [
      string,
      Record<string, string>,
    ][];
    const theirs = Object.entries((await provider(call))[sectionKey(fn)]) as [string, Record<string, string>][];
    assert.deepEqual(
      ours.map(([day]) => day),
      theirs.map(([day]) => day),
    );
    const change = (rows: [string, Record<string, string>][], i: number) =>
      (Number(rows[i]?.[1][key]) - Number(rows[i + 1]?.[1][key])).toFixed(2);
    for (let i = 0; i < ours.length - 1; i += 1) assert.equal(change(ours, i), change(theirs, i), `${fn} ${ours[i]?.[0]}`);
    assert.notEqual(ours[0]?.[1][key], theirs[0]?.[1][key], `${fn}: the levels differ by the histories' starts`);
  }
});
