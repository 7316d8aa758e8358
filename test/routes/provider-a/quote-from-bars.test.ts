// The Yahoo quote read from the stored daily bars is honest: at the same instant it is the quote Yahoo's own
// one-day chart gives by the recorded rules (chartPreviousClose of range=1d as the previous close), and the
// simulated provider A's GLOBAL_QUOTE, field for field: before the opening (the last session's quote), in
// the session, after the close, on a weekend, and after the series was extended across a weekend.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { chartPath } from '../../helpers/yahoo-paths.js';
import { chartResult } from '../../../src/upstreams/yahoo/parse-chart.js';
import { chartQuote } from '../../helpers/chart-quote.js';
import { BROWSER_USER_AGENT } from '../../../src/upstreams/yahoo/yahoo-chart-source.js';
import { httpGet, startApp } from '../../helpers/app.js';

/** New York times, November 2026 (standard time, UTC-5); the 13th is a Friday. */
const AT = {
  fridayAfterClose: Date.parse('2026-11-13T23:00:00Z'),
  saturday: Date.parse('2026-11-14T15:00:00Z'),
  mondayPreMarket: Date.parse('2026-11-16T13:00:00Z'),
  mondayOpening: Date.parse('2026-11-16T14:31:00Z'),
  tuesdaySession: Date.parse('2026-11-17T17:45:00Z'),
};

async function yahooOnly(t: Parameters<typeof startApp>[0], clock: { now: number }, env: Record<string, string> = {}) {
  const running = await startApp(t, {
    env: { QUOTE_FALLBACK: 'yahoo', DATA_MODE: 'live', ...env },
    configure: (c) => ({ ...c, alphaVantage: { ...c.alphaVantage, apiKey: undefined } }),
    sandbox: { now: () => clock.now, alphaVantage: { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 } },
  });
  const { sandbox } = running;
  /** The same quote as Yahoo's one-day chart gives it, and as provider A gives it, at the clock's instant. */
  const references = async (symbol: string) => {
    const chart = await httpGet(`${sandbox.yahoo.origin}${chartPath(symbol)}?range=1d&interval=1d`, { 'user-agent': BROWSER_USER_AGENT });
    const av = await httpGet(
      `${sandbox.alphaVantage.origin}/query?function=GLOBAL_QUOTE&symbol=${symbol}&apikey=${SANDBOX_CREDENTIALS.alphaVantageKey}`,
    );
    return { oneDay: chartQuote(chartResult(chart.body, symbol), symbol, symbol)['Global Quote'], providerA: av.body['Global Quote'] };
  };
  return { ...running, references };
}

test("from stored bars, the quote is the one-day chart's and provider A's, at every time of the week", async (t) => {
  for (const [name, now] of Object.entries(AT)) {
    const clock = { now };
    const { get, references } = await yahooOnly(t, clock);
    const res = await get('/api/provider-a/quote?symbol=MSFT');
    assert.equal(res.status, 200, `${name}: ${res.text}`);
    assert.equal(res.headers['x-data-source'], 'yahoo');
    const { oneDay, providerA } = await references('MSFT');
    assert.deepEqual(res.body['Global Quote'], oneDay, `${name}: the one-day chart's quote`);
    assert.deepEqual(res.body['Global Quote'], providerA, `${name}: provider A's quote`);
  }
});

test("extended across a weekend, the series gives Monday's quote Friday's close as its previous close", async (t) => {
  const clock = { now: AT.fridayAfterClose };
  const { get, references, sandbox } = await yahooOnly(t, clock, { CACHE_QUOTE_FRESH_SECONDS: '0' });
  const friday = await get('/api/provider-a/quote?symbol=KO');
  clock.now = AT.mondayOpening;
  const ranges: string[] = [];
  sandbox.yahoo.on('request', (event: { query: URLSearchParams }) => ranges.push(String(event.query.get('range'))));
  const monday = await get('/api/provider-a/quote?symbol=KO');
  assert.deepEqual(ranges.slice(0, 1), ['1d'], "extended with Monday's one-day chart, not fetched again");
  assert.equal(quoteOf(monday)['08. previous close'], quoteOf(friday)['05. price']);
  assert.equal(quoteOf(monday)['07. latest trading day'], '2026-11-16');
  const { oneDay, providerA } = await references('KO');
  assert.deepEqual(quoteOf(monday), oneDay);
  assert.deepEqual(quoteOf(monday), providerA);
});

const quoteOf = (res: { body: any }) => res.body['Global Quote'] as Record<string, string>;
