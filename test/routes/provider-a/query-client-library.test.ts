// The drop-in promise, tested with a client we did not write: the `alphavantage` npm package, with only its
// base URL changed (the package keeps it on the config object it is given), drives /query for a quote,
// RSI, MACD with explicit periods, BBANDS, search and the daily series. The simulator behind the service
// shows what reached the upstream: one call per distinct request, never the caller's key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import alphavantage from 'alphavantage';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, PREMIUM_PLAN, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit, on a plan that allows every function. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK, ...PREMIUM_PLAN };

const CALLER_KEY = 'BROWSERKEY987654';

test('the alphavantage npm client works against /query with only its base URL changed', async (t) => {
  const { url, sandbox, config, get } = await startApp(t, { env: ANSWERS_ENV });
  const upstream: URLSearchParams[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => upstream.push(event.query));
  const settings: { key: string; base?: string } = { key: CALLER_KEY };
  const alpha = alphavantage(settings);
  settings.base = `${url}/api/provider-a/query?apikey=${CALLER_KEY}&`;

  const quote = await alpha.data.quote('IBM');
  assert.deepEqual(quote, (await get('/api/provider-a/quote?symbol=IBM')).body);
  assert.equal(alpha.util.polish<{ data: { symbol: string } }>(quote).data.symbol, 'IBM');

  const rsi = await alpha.technical.rsi('IBM', 'daily', 14, 'close');
  assert.equal(rsi['Meta Data']['5: Time Period'], 14);
  assert.ok(Object.keys(rsi['Technical Analysis: RSI']).length > 10);

  const macd = await alpha.technical.macd('IBM', 'daily', 'close', 10, 30, 7, undefined, undefined, undefined);
  assert.deepEqual(
    ['5.1: Fast Period', '5.2: Slow Period', '5.3: Signal Period'].map((k) => macd['Meta Data'][k]),
    [10, 30, 7],
  );
  const macdRow = Object.values(macd['Technical Analysis: MACD'])[0] as Record<string, string>;
  assert.deepEqual(Object.keys(macdRow).sort(), ['MACD', 'MACD_Hist', 'MACD_Signal']);

  const bbands = await alpha.technical.bbands('IBM', 'daily', 20, 'close', 2, 2, 0);
  const band = Object.values(bbands['Technical Analysis: BBANDS'])[0] as Record<string, string>;
  assert.ok(
    Number(band['Real Lower Band']) < Number(band['Real Middle Band']) &&
      Number(band['Real Middle Band']) < Number(band['Real Upper Band']),
  );

  const search = await alpha.data.search('micro');
  assert.ok(search.bestMatches.some((m) => m['1. symbol'] === 'MSFT'));

  const daily = await alpha.data.daily('IBM', 'full');
  assert.equal(daily['Meta Data']['2. Symbol'], 'IBM');
  assert.ok(Object.keys(daily['Time Series (Daily)']).length > 100);

  // The library reports our errors as errors, not data.
  await assert.rejects(alpha.data.quote('ZZZZQX'));
  await assert.rejects(alpha.technical.rsi('IBM', 'daily', 'abc', 'close'));

  assert.equal(upstream.length, 7, 'one upstream call per distinct request (the quote was served from cache, bad input never sent)');
  for (const query of upstream) {
    assert.ok(!query.toString().includes(CALLER_KEY), `the caller key reached the upstream: ${query.get('function')}`);
    assert.equal(query.get('apikey'), config.alphaVantage.apiKey);
    assert.equal(query.get('datatype'), null);
  }
  const sent = upstream.map((q) => Object.fromEntries(q));
  const sentMacd = sent.find((q) => q.function === 'MACD');
  assert.deepEqual([sentMacd?.fastperiod, sentMacd?.slowperiod, sentMacd?.signalperiod], ['10', '30', '7']);
});

test("the alphavantage npm client's fundamentals, forex and crypto calls work against /query; its CSV reading agrees with the JSON", async (t) => {
  // The production plan (free) and limits off: none of these calls is premium but FX intraday, refused as Alpha Vantage refuses it.
  const { url, sandbox, config, get } = await startApp(t, { env: { ...UNCAPPED } });
  const upstream: URLSearchParams[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => upstream.push(event.query));
  const settings: { key: string; base?: string } = { key: CALLER_KEY };
  const alpha = alphavantage(settings);
  settings.base = `${url}/api/provider-a/query?apikey=${CALLER_KEY}&`;
  const viaService = async (query: string) => (await get(`/api/provider-a/query?${query}`)).body;

  const overview = await alpha.fundamental.company_overview('IBM');
  assert.equal(overview.Name, 'International Business Machines Corporation');
  assert.deepEqual(overview, await viaService('function=OVERVIEW&symbol=IBM'));
  for (const statement of ['income_statement', 'balance_sheet', 'cash_flow'] as const) {
    const body = await alpha.fundamental[statement]('IBM');
    assert.equal(body.symbol, 'IBM', statement);
    assert.ok(body.annualReports.length > 0 && body.quarterlyReports.length > 0, statement);
  }

  const rate = alpha.util.polish<{ rate: Record<string, string> }>(await alpha.forex.rate('EUR', 'USD'));
  assert.ok(Number(rate.rate.value ?? rate.rate['5. Exchange Rate'] ?? Number.NaN) > 0, JSON.stringify(rate));
  for (const period of ['daily', 'weekly', 'monthly'] as const) {
    const fx = await alpha.forex[period]('EUR', 'USD');
    assert.equal(fx['Meta Data']['2. From Symbol'], 'EUR', period);
    const polished = alpha.util.polish<{ data: Record<string, unknown> }>(fx);
    assert.ok(Object.keys(polished.data).length > 3, `forex ${period}`);
    const crypto = await alpha.crypto[period]('BTC', 'USD');
    assert.equal(crypto['Meta Data']['2. Digital Currency Code'], 'BTC', period);
    assert.ok(Object.keys(alpha.util.polish<{ data: Record<string, unknown> }>(crypto).data).length > 3, `crypto ${period}`);
  }
  // FX intraday is premium: the library reports the premium notice as the error it is.
  await assert.rejects(alpha.forex.intraday('EUR', 'USD', '5min', 'compact'), /An AlphaVantage error occurred. 503/);

  // CSV, as the library reads it (its own splitter) and as a CSV library does, holds the rows of the JSON answer.
  const experimental = (
    alpha as unknown as { experimental: (fn: string, params: Record<string, string>) => Promise<Record<string, string>[]> }
  ).experimental;
  const csvRows = await experimental('FX_WEEKLY', { from_symbol: 'EUR', to_symbol: 'USD', datatype: 'csv' });
  const weekly = (await viaService('function=FX_WEEKLY&from_symbol=EUR&to_symbol=USD'))['Time Series FX (Weekly)'];
  assert.deepEqual(
    csvRows.filter((r) => r.timestamp !== '').map((r) => [r.timestamp, r.close]),
    Object.entries(weekly as Record<string, Record<string, string>>).map(([day, v]) => [day, v['4. close']]),
  );
  const listings = await experimental('LISTING_STATUS', { datatype: 'csv' });
  assert.ok(listings.some((r) => r.symbol === 'IBM' && r.status === 'Active'));

  for (const query of upstream) {
    assert.ok(!query.toString().includes(CALLER_KEY), `the caller key reached the upstream: ${query.get('function')}`);
    assert.equal(query.get('apikey'), config.alphaVantage.apiKey);
  }
  const functions = upstream.map((q) => q.get('function'));
  assert.ok(!functions.includes('FX_INTRADAY'), 'the premium function was not asked');
  assert.equal(
    new Set(upstream.map((q) => q.toString())).size,
    upstream.length,
    'each distinct call asked once, the repeats from the cache',
  );
});
