// /query as a drop-in for every documented Alpha Vantage function, in the sandbox: the functions the service
// does not own are forwarded (documented parameters only, the service's key, the family's fresh window,
// single flight, the budget) and answered in Alpha Vantage's shapes, JSON or CSV; a second identical call is a
// cache hit that costs no provider call; a premium function on the free plan is Alpha Vantage's own premium
// notice with no call. Shapes are held to the recorded answers (test/fixtures/recorded/alpha-vantage/).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { PREMIUM_ENDPOINT } from '../../../src/wire/alpha-vantage/notices.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { recording } from '../../helpers/recorded.js';
import { compareShapes, describeDifferences, shapeOf } from '../../helpers/wire-shape.js';

const QUERY = '/api/provider-a/query';

/** Each call of the list, with the recording whose shape its answer must have. */
const JSON_CALLS: Array<[string, string]> = [
  ['function=OVERVIEW&symbol=IBM', 'overview-tsla'],
  ['function=INCOME_STATEMENT&symbol=IBM', 'income-statement-tsla'],
  ['function=EARNINGS&symbol=IBM', 'earnings-tsla'],
  ['function=CURRENCY_EXCHANGE_RATE&from_currency=USD&to_currency=JPY', 'currency-exchange-rate-usd-jpy'],
  ['function=FX_DAILY&from_symbol=EUR&to_symbol=USD', 'fx-daily-eur-usd'],
  ['function=DIGITAL_CURRENCY_DAILY&symbol=BTC&market=CNY', 'digital-currency-daily-btc-cny'],
  // No WTI answer is recorded: the commodities share the economic indicators' recorded layout.
  ['function=WTI&interval=monthly', 'treasury-yield-monthly-10year'],
  ['function=REAL_GDP&interval=annual', 'real-gdp-annual'],
  ['function=TREASURY_YIELD&interval=monthly&maturity=10year', 'treasury-yield-monthly-10year'],
  ['function=NEWS_SENTIMENT&tickers=AAPL', 'news-sentiment-accd'],
  ['function=TOP_GAINERS_LOSERS', 'top-gainers-losers-2023-09-06'],
  ['function=MARKET_STATUS', 'market-status'],
];

const CSV_CALLS: Array<[string, string]> = [
  ['function=LISTING_STATUS', 'symbol,name,exchange,assetType,ipoDate,delistingDate,status'],
  ['function=EARNINGS_CALENDAR', 'symbol,name,reportDate,fiscalDateEnding,estimate,currency,timeOfTheDay'],
  ['function=TIME_SERIES_DAILY&symbol=IBM&datatype=csv', 'timestamp,open,high,low,close,volume'],
];

test("the issue's functions answer 200 in Alpha Vantage's shapes; a second identical call is a cache hit with no provider call", async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...UNCAPPED } });
  for (const [query, name] of JSON_CALLS) {
    const first = await get(`${QUERY}?${query}`);
    assert.equal(first.status, 200, `${query}: ${first.text.slice(0, 200)}`);
    assert.match(String(first.headers['content-type']), /^application\/json/, query);
    assert.equal(first.headers['x-cache'], 'MISS', query);
    const differences = compareShapes(shapeOf(recording('alpha-vantage', name).json), shapeOf(first.body));
    assert.deepEqual(differences, [], `${query}: ${describeDifferences(differences)}`);
    const calls = sandbox.alphaVantage.count();
    const again = await get(`${QUERY}?${query}`);
    assert.equal(again.headers['x-cache'], 'HIT', query);
    assert.equal(again.text, first.text, query);
    assert.equal(sandbox.alphaVantage.count(), calls, `${query}: the repeat cost a provider call`);
  }
  for (const [query, header] of CSV_CALLS) {
    const first = await get(`${QUERY}?${query}`);
    assert.equal(first.status, 200, `${query}: ${first.text.slice(0, 200)}`);
    assert.match(String(first.headers['content-type']), /^text\/csv/, query);
    assert.equal(first.text.split('\r\n')[0], header, query);
    assert.ok((parse(first.text, { columns: true }) as unknown[]).length > 0, `${query}: rows`);
    const calls = sandbox.alphaVantage.count();
    const again = await get(`${QUERY}?${query}`);
    assert.equal(again.headers['x-cache'], 'HIT', query);
    assert.equal(sandbox.alphaVantage.count(), calls, `${query}: the repeat cost a provider call`);
  }
  // An owned series or quote says how fresh it is, as /daily and /quote do, its CSV rendering alike.
  const daily = await get(`${QUERY}?function=TIME_SERIES_DAILY&symbol=IBM`);
  const dailyCsv = await get(`${QUERY}?function=TIME_SERIES_DAILY&symbol=IBM&datatype=csv`);
  assert.ok(daily.headers['x-data-freshness'], 'the JSON series says how fresh it is');
  assert.equal(dailyCsv.headers['x-data-freshness'], daily.headers['x-data-freshness']);
  assert.ok((await get(`${QUERY}?function=GLOBAL_QUOTE&symbol=IBM&datatype=csv`)).headers['x-data-freshness']);
});

test('a premium function on the free plan is the premium notice with no provider call; an indicator the service computes is computed', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...UNCAPPED } });
  for (const query of [
    'function=TIME_SERIES_DAILY_ADJUSTED&symbol=IBM',
    'function=FX_INTRADAY&from_symbol=EUR&to_symbol=USD&interval=5min',
    'function=VWAP&symbol=IBM&interval=15min',
    'function=REALTIME_OPTIONS&symbol=IBM&datatype=csv',
  ]) {
    const res = await get(`${QUERY}?${query}`);
    assert.equal(res.status, 503, query);
    assert.equal(res.body.error.code, 'PROVIDER_NOT_CONFIGURED');
    assert.equal(res.body.Information, PREMIUM_ENDPOINT.Information, query);
    assert.equal(res.body.error.message, PREMIUM_ENDPOINT.Information);
  }
  // MACD is premium too, and the service computes it from Yahoo's bars, as it did.
  const macd = await get(`${QUERY}?function=MACD&symbol=IBM&interval=daily&series_type=close`);
  assert.equal(macd.status, 200, macd.text);
  assert.equal(macd.headers['x-data-source'], 'yahoo');
  assert.equal(sandbox.alphaVantage.count(), 0, 'no premium function was asked of provider A');
});

test('without Yahoo, a premium indicator on the free plan is the premium notice; on the premium plan it is asked', async (t) => {
  const free = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK } });
  const refused = await free.get(`${QUERY}?function=MACD&symbol=IBM&interval=daily&series_type=close`);
  assert.equal(refused.status, 503);
  assert.equal(refused.body.Information, PREMIUM_ENDPOINT.Information);
  assert.equal(free.sandbox.alphaVantage.count(), 0);
  const premium = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK, ALPHA_VANTAGE_PLAN: 'premium' } });
  const asked = await premium.get(`${QUERY}?function=TIME_SERIES_DAILY_ADJUSTED&symbol=IBM`);
  assert.equal(asked.status, 200, asked.text);
  assert.ok(asked.body['Time Series (Daily)']);
  assert.equal(premium.sandbox.alphaVantage.count(), 1);
});

test("a forwarded call carries its documented parameters only, the service's key, and its CSV is its own cache entry", async (t) => {
  const { get, sandbox, config } = await startApp(t, { env: { ...UNCAPPED } });
  const seen: URLSearchParams[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => seen.push(event.query));
  const json = await get(`${QUERY}?function=fx_daily&from_symbol=eur&to_symbol=usd&apikey=caller-key&symbol=IBM&evil=1&datatype=json`);
  assert.equal(json.status, 200, json.text);
  const csv = await get(`${QUERY}?function=FX_DAILY&from_symbol=EUR&to_symbol=USD&datatype=csv`);
  assert.equal(csv.status, 200, csv.text);
  assert.equal(csv.headers['x-cache'], 'MISS', 'the CSV is cached under its own key');
  assert.deepEqual(
    seen.map((q) => Object.fromEntries(q)),
    [
      { function: 'FX_DAILY', from_symbol: 'EUR', to_symbol: 'USD', apikey: config.alphaVantage.apiKey },
      { function: 'FX_DAILY', from_symbol: 'EUR', to_symbol: 'USD', datatype: 'csv', apikey: config.alphaVantage.apiKey },
    ],
    'documented parameters only, upper-cased where Alpha Vantage reads any case, datatype=json left as the default',
  );
  // The CSV, read by a CSV library, holds the JSON answer's rows.
  const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
  const series = json.body['Time Series FX (Daily)'] as Record<string, Record<string, string>>;
  assert.deepEqual(
    rows.map((r) => [r.timestamp, r.open, r.high, r.low, r.close]),
    Object.entries(series).map(([day, v]) => [day, v['1. open'], v['2. high'], v['3. low'], v['4. close']]),
  );
});

test('each family is fresh for its own window, a setting; an intraday interval takes the intraday window', async (t) => {
  const { get } = await startApp(t, { env: { ...UNCAPPED, CACHE_AV_NEWS_SECONDS: '30' } });
  const maxAge = async (query: string) => {
    const res = await get(`${QUERY}?${query}`);
    assert.equal(res.status, 200, `${query}: ${res.text.slice(0, 200)}`);
    return /max-age=(\d+)/.exec(String(res.headers['cache-control']))?.[1];
  };
  assert.equal(await maxAge('function=OVERVIEW&symbol=IBM'), '86400');
  assert.equal(await maxAge('function=IPO_CALENDAR'), '86400');
  assert.equal(await maxAge('function=CPI'), '86400');
  assert.equal(await maxAge('function=COPPER'), '86400');
  assert.equal(await maxAge('function=CURRENCY_EXCHANGE_RATE&from_currency=BTC&to_currency=USD'), '60');
  assert.equal(await maxAge('function=DIGITAL_CURRENCY_WEEKLY&symbol=ETH&market=USD'), '60');
  assert.equal(await maxAge('function=HISTORICAL_OPTIONS&symbol=IBM'), '60');
  assert.equal(await maxAge('function=NEWS_SENTIMENT'), '30');
  assert.equal(await maxAge('function=APO&symbol=IBM&interval=daily&series_type=close'), '3600');
  assert.equal(await maxAge('function=APO&symbol=IBM&interval=5min&series_type=close'), '60');
});

test('concurrent identical calls share one provider call; the budget refuses what it would exceed', async (t) => {
  const { get, sandbox } = await startApp(t, {
    env: { ...UNCAPPED, ALPHA_VANTAGE_CALLS_PER_MINUTE: '1', ALPHA_VANTAGE_MIN_INTERVAL_MS: '1200' },
  });
  const answers = await Promise.all(Array.from({ length: 8 }, () => get(`${QUERY}?function=BALANCE_SHEET&symbol=MSFT`)));
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(8).fill(200),
  );
  assert.equal(sandbox.alphaVantage.count(), 1);
  const refused = await get(`${QUERY}?function=CASH_FLOW&symbol=MSFT`);
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.equal(refused.body.Information, refused.body.error.message);
  assert.equal(sandbox.alphaVantage.count(), 1);
});

test("Alpha Vantage's own errors for a forwarded function keep its keys: an unknown pair, a missing parameter, no fundamentals", async (t) => {
  const { get, sandbox } = await startApp(t, { env: { ...UNCAPPED } });
  const missing = await get(`${QUERY}?function=DIGITAL_CURRENCY_DAILY&symbol=BTC`);
  assert.equal(missing.status, 400);
  assert.equal(missing.body['Error Message'], 'market is required for DIGITAL_CURRENCY_DAILY');
  assert.equal(sandbox.alphaVantage.count(), 0, 'a call missing a required parameter is not sent');
  const unknown = await get(`${QUERY}?function=CURRENCY_EXCHANGE_RATE&from_currency=XXX&to_currency=USD`);
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(typeof unknown.body['Error Message'], 'string');
  // A fundamentals call for a symbol without fundamentals: Alpha Vantage's `{}`, the symbol's answer (404), not drift.
  const empty = await get(`${QUERY}?function=OVERVIEW&symbol=SPY`);
  assert.equal(empty.status, 404, empty.text);
  assert.equal(empty.body['Error Message'], 'Alpha Vantage has no OVERVIEW data for this symbol');
});
