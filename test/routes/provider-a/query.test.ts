import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, PREMIUM_PLAN, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit, on a plan that allows every function. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK, ...PREMIUM_PLAN };

const QUERY = '/api/provider-a/query';
const CALLER_KEY = 'CALLERKEY0123456';

test('GLOBAL_QUOTE answers the /quote body from the same cache entry; the caller key is ignored and redacted', async (t) => {
  const { get, sandbox, scan } = await startApp(t, { env: ANSWERS_ENV });
  const seen: SimRequestEvent[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => seen.push(event));
  const viaQuery = await get(`${QUERY}?function=GLOBAL_QUOTE&symbol=ibm&apikey=${CALLER_KEY}&outputsize=full&datatype=json`);
  assert.equal(viaQuery.status, 200, viaQuery.text);
  assert.equal(viaQuery.headers['x-cache'], 'MISS');
  const viaRest = await get('/api/provider-a/quote?symbol=IBM');
  assert.equal(viaRest.headers['x-cache'], 'HIT');
  assert.deepEqual(viaQuery.body, viaRest.body);
  assert.equal(seen.length, 1);
  assert.ok(!seen[0]!.query.toString().includes(CALLER_KEY), 'the caller key never reaches the upstream');
  assert.equal(seen[0]!.query.get('outputsize'), null, 'parameters GLOBAL_QUOTE does not take are not forwarded');
  const again = await get(`${QUERY}?function=global_quote&symbol=IBM&apikey=${CALLER_KEY}`);
  assert.equal(again.headers['x-cache'], 'HIT');
  // An exact repeat is answered before routing (the hot path), which writes its own request line.
  const hot = await get(`${QUERY}?function=global_quote&symbol=IBM&apikey=${CALLER_KEY}`);
  assert.equal(hot.headers['x-cache'], 'HIT');
  const requestLines = scan.lines.filter((line) => line.includes('/api/provider-a/query'));
  assert.equal(requestLines.length, 3, 'every request is logged');
  for (const line of requestLines) {
    assert.ok(!line.includes(CALLER_KEY), `caller key in a log line: ${line}`);
    assert.match(line, /apikey=\[REDACTED\]/);
  }
});

test('a function Alpha Vantage does not document is its own invalid-call answer, with no upstream call', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  for (const [fn, named] of [
    ['NOT_A_FUNCTION', ' for NOT_A_FUNCTION'],
    ['sector', ' for SECTOR'],
    ['', ''],
  ]) {
    const res = await get(`${QUERY}?function=${fn}&symbol=IBM`);
    assert.equal(res.status, 400, fn);
    assert.equal(res.body.error.code, 'INVALID_PARAMETER');
    assert.equal(
      res.body.error.message,
      `Invalid API call. Please retry or visit the documentation (https://www.alphavantage.co/documentation/)${named}.`,
    );
    assert.equal(res.body['Error Message'], res.body.error.message);
  }
  const missing = await get(`${QUERY}?symbol=IBM`);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.code, 'MISSING_PARAMETER');
  assert.equal(typeof missing.body['Error Message'], 'string');
  assert.equal(sandbox.alphaVantage.count(), 0);
});

test('an invalid function of 8,000 characters is echoed cut to 100 characters, in a body under 1 KB', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const res = await get(`${QUERY}?function=${'F'.repeat(8_000)}&symbol=IBM`);
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'INVALID_PARAMETER');
  assert.ok(Buffer.byteLength(res.text) < 1_024, `${Buffer.byteLength(res.text)} bytes`);
  assert.equal(
    res.body.error.message,
    `Invalid API call. Please retry or visit the documentation (https://www.alphavantage.co/documentation/) for ${'F'.repeat(99)}….`,
  );
  assert.equal(res.body['Error Message'], res.body.error.message);
  assert.equal(sandbox.alphaVantage.count(), 0);
});

test('bad input is a 400 with "Error Message"; an unknown symbol a 404 with it', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const cases: Array<[string, string, RegExp]> = [
    ['function=GLOBAL_QUOTE', 'MISSING_PARAMETER', /symbol is required for GLOBAL_QUOTE/],
    ['function=SYMBOL_SEARCH', 'MISSING_PARAMETER', /keywords is required/],
    ['function=TIME_SERIES_INTRADAY&symbol=IBM', 'MISSING_PARAMETER', /interval is required for TIME_SERIES_INTRADAY/],
    ['function=TIME_SERIES_INTRADAY&symbol=IBM&interval=daily', 'INVALID_PARAMETER', /interval must be one of: 1min/],
    ['function=TIME_SERIES_DAILY&symbol=IBM&outputsize=huge', 'INVALID_PARAMETER', /outputsize must be one of: compact, full/],
    ['function=RSI&symbol=IBM&interval=2min', 'INVALID_PARAMETER', /interval must be one of/],
    ['function=MACD&symbol=IBM&fastperiod=1e1', 'INVALID_PARAMETER', /fastperiod must be a whole number/],
    ['function=GLOBAL_QUOTE&symbol=IBM&datatype=xml', 'INVALID_PARAMETER', /datatype must be one of: json, csv/],
    ['function=OVERVIEW', 'MISSING_PARAMETER', /symbol is required for OVERVIEW/],
    ['function=CURRENCY_EXCHANGE_RATE&from_currency=USD', 'MISSING_PARAMETER', /to_currency is required for CURRENCY_EXCHANGE_RATE/],
    ['function=GLOBAL_QUOTE&symbol=IB%20M', 'INVALID_PARAMETER', /symbol/],
  ];
  for (const [query, code, message] of cases) {
    const res = await get(`${QUERY}?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, code, query);
    assert.match(res.body.error.message, message, query);
    assert.equal(res.body['Error Message'], res.body.error.message, query);
    assert.equal(res.body.Information, undefined);
  }
  assert.equal(sandbox.alphaVantage.count(), 0, 'no bad call reaches the upstream');
  const unknown = await get(`${QUERY}?function=TIME_SERIES_DAILY&symbol=ZZZZQX`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'SYMBOL_NOT_FOUND');
  assert.equal(typeof unknown.body['Error Message'], 'string');
});

test('a spent budget is a 429 with Retry-After and "Information"', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '1' } });
  assert.equal((await get(`${QUERY}?function=GLOBAL_QUOTE&symbol=AAPL`)).status, 200);
  const refused = await get(`${QUERY}?function=SYMBOL_SEARCH&keywords=micro`);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'QUOTA_EXHAUSTED');
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.equal(refused.body.Information, refused.body.error.message);
  assert.equal(refused.body['Error Message'], undefined);
});

test('indicators answer as /technical does, from the same cache entries, with their optional parameters', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen: SimRequestEvent[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => seen.push(event));
  const macd = await get(
    `${QUERY}?function=MACD&symbol=IBM&interval=daily&series_type=close&time_period=10&fastperiod=10&slowperiod=30&signalperiod=7&apikey=${CALLER_KEY}`,
  );
  assert.equal(macd.status, 200, macd.text);
  assert.equal(macd.body['Meta Data']['5.3: Signal Period'], 7);
  const rest = await get('/api/provider-a/technical?symbol=IBM&indicator=MACD&fastperiod=10&slowperiod=30&signalperiod=7');
  assert.equal(rest.headers['x-cache'], 'HIT');
  assert.deepEqual(rest.body, macd.body);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.query.get('time_period'), null, 'MACD takes no time_period: ignored, not forwarded');
  const stoch = await get(`${QUERY}?function=STOCH&symbol=IBM&interval=daily&time_period=14&series_type=close`);
  assert.equal(stoch.status, 200, 'the uniform parameter set a front-end sends is accepted for STOCH');
});

test("SYMBOL_SEARCH and the TIME_SERIES functions answer in Alpha Vantage's shapes with only their own parameters forwarded", async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen: SimRequestEvent[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => seen.push(event));
  const search = await get(`${QUERY}?function=SYMBOL_SEARCH&keywords=micro&apikey=${CALLER_KEY}`);
  assert.equal(search.status, 200, search.text);
  assert.ok(search.body.bestMatches.some((m: Record<string, string>) => m['1. symbol'] === 'MSFT'));
  const daily = await get(`${QUERY}?function=TIME_SERIES_DAILY&symbol=IBM&outputsize=full`);
  assert.equal(daily.status, 200, daily.text);
  assert.equal(daily.body['Meta Data']['4. Output Size'], 'Full size');
  assert.ok(Object.keys(daily.body['Time Series (Daily)']).length > 100);
  const weekly = await get(`${QUERY}?function=TIME_SERIES_WEEKLY&symbol=IBM&outputsize=full`);
  assert.ok(weekly.body['Weekly Time Series']);
  const monthly = await get(`${QUERY}?function=TIME_SERIES_MONTHLY&symbol=IBM`);
  assert.ok(monthly.body['Monthly Time Series']);
  const intraday = await get(`${QUERY}?function=TIME_SERIES_INTRADAY&symbol=IBM&interval=15min&month=2024-05`);
  assert.equal(intraday.status, 200, intraday.text);
  const rows = Object.keys(intraday.body['Time Series (15min)']);
  assert.equal(rows.length, 100);
  assert.ok(
    rows.every((key) => /^2024-05-\d{2} \d{2}:\d{2}:00$/.test(key)),
    rows[0],
  );
  assert.equal(seen.length, 5);
  const [, dailyCall, weeklyCall, , intradayCall] = seen.map((e) => Object.fromEntries(e.query));
  assert.equal(dailyCall!.outputsize, 'full');
  assert.equal(weeklyCall!.outputsize, undefined, 'weekly takes no outputsize');
  assert.deepEqual([intradayCall!.interval, intradayCall!.month, intradayCall!.outputsize], ['15min', '2024-05', 'compact']);
  for (const event of seen) assert.ok(!event.query.toString().includes(CALLER_KEY));
});

test('a caller over its own limit gets the 429 with "Information" too', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '2' } });
  for (let i = 0; i < 2; i += 1) assert.equal((await get(`${QUERY}?function=GLOBAL_QUOTE&symbol=IBM&n=${i}`)).status, 200);
  const limited = await get(`${QUERY}?function=GLOBAL_QUOTE&symbol=IBM&n=3`);
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'RATE_LIMITED');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  assert.equal(limited.body.Information, limited.body.error.message);
});

test('TIME_SERIES_INTRADAY: extended_hours=false gives the regular session only; the flags are forwarded and keyed', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const seen: SimRequestEvent[] = [];
  sandbox.alphaVantage.on('request', (event: SimRequestEvent) => seen.push(event));
  const base = `${QUERY}?function=TIME_SERIES_INTRADAY&symbol=IBM&interval=30min&month=2024-05`;
  const regular = await get(`${base}&extended_hours=FALSE&adjusted=false`);
  assert.equal(regular.status, 200, regular.text);
  const times = Object.keys(regular.body['Time Series (30min)']).map((key) => key.slice(11, 16));
  assert.equal(times.length, 100);
  assert.ok(
    times.every((hm) => hm >= '09:30' && hm < '16:00'),
    times.join(),
  );
  const extended = await get(base);
  assert.equal(extended.headers['x-cache'], 'MISS', 'a different answer, so a different cache entry');
  const extendedTimes = Object.keys(extended.body['Time Series (30min)']).map((key) => key.slice(11, 16));
  assert.ok(extendedTimes.some((hm) => hm < '09:30' || hm >= '16:00'));
  assert.deepEqual([seen[0]!.query.get('extended_hours'), seen[0]!.query.get('adjusted')], ['false', 'false']);
  assert.deepEqual([seen[1]!.query.get('extended_hours'), seen[1]!.query.get('adjusted')], [null, null]);
  const bad = await get(`${base}&extended_hours=yes`);
  assert.equal(bad.status, 400);
  assert.match(bad.body['Error Message'], /extended_hours must be one of: true, false/);
});
