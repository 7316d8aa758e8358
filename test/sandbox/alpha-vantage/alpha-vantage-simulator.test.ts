import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { parse } from 'csv-parse/sync';
import { request } from 'undici';
import {
  type AlphaVantageSimulatorOptions,
  createAlphaVantageSimulator,
} from '../../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { priceAt } from '../../../src/sandbox/price-model.js';
import { cents } from '../../../src/sandbox/session-bars.js';
import { technicalParams } from '../../../src/upstreams/alpha-vantage/alpha-vantage-client.js';
import { classifyAlphaVantageBody } from '../../../src/upstreams/alpha-vantage/classify-body.js';
import { INDICATORS, type IndicatorSpec, indicatorSpec, sectionKey } from '../../../src/wire/alpha-vantage/indicators.js';
import { parseGlobalQuote } from '../../../src/upstreams/alpha-vantage/parse-global-quote.js';
import { parseSymbolSearch } from '../../../src/upstreams/alpha-vantage/parse-symbol-search.js';
import { parseTechnical } from '../../../src/upstreams/alpha-vantage/parse-technical.js';
import { parseTimeSeries } from '../../../src/upstreams/alpha-vantage/parse-time-series.js';
import { ALPHA_VANTAGE_FUNCTIONS } from '../../../src/wire/alpha-vantage/functions.js';
import { demoQuery } from '../../helpers/alpha-vantage-demos.js';
import { fixture } from '../../helpers/fixtures.js';

const KEY = 'test-key';
const DAY = 86_400_000;
/** Friday 2024-05-10 11:30 US/Eastern (daylight time). */
const FRIDAY = Date.parse('2024-05-10T15:30:00Z');

const INVALID_KEY =
  'the parameter apikey is invalid or missing. Please claim your free API key on (https://www.alphavantage.co/support/#api-key). It should take less than 20 seconds.';
const DOCUMENTED_NOTE =
  'Thank you for using Alpha Vantage! Our standard API call frequency is 5 calls per minute and 500 calls per day. Please visit https://www.alphavantage.co/premium/ if you would like to target a higher API call frequency.';
/** The daily cap as the live service sent it (the recorded corpus). */
const DOCUMENTED_DAILY: string = fixture('recorded/alpha-vantage', 'information-daily-cap-2025-12.json').Information;
/** The burst text quoted word for word in the wild for today's free key (25 a day); see the corpus's SOURCES.md. */
const WILD_BURST =
  'Thank you for using Alpha Vantage! Please consider spreading out your free API requests more sparingly (1 request per second). You may subscribe to any of the premium plans at https://www.alphavantage.co/premium/ to lift the free key rate limit (25 requests per day), raise the per-second burst limit, and instantly unlock all premium endpoints';
/** The same text with the documented plan's daily figure, as the simulator sends it with its defaults. */
const DOCUMENTED_BURST = WILD_BURST.replace('(25 requests per day)', '(500 requests per day)');
const PREMIUM =
  'Thank you for using Alpha Vantage! This is a premium endpoint. You may subscribe to any of the premium plans at https://www.alphavantage.co/premium/ to instantly unlock all premium endpoints';
const invalidCall = (fn: string) =>
  `Invalid API call. Please retry or visit the documentation (https://www.alphavantage.co/documentation/) for ${fn}.`;

interface Reply {
  status: number;
  contentType: string | undefined;
  text: string;
  body: any;
}

/** A simulator on loopback with its own clock; limits off and a premium key unless the test says otherwise. */
async function start(t: TestContext, options: Partial<AlphaVantageSimulatorOptions> = {}) {
  const clock = { now: FRIDAY };
  const sim = createAlphaVantageSimulator({
    validKeys: [KEY],
    plan: 'premium',
    callsPerMinute: 0,
    callsPerDay: 0,
    burstPerSecond: 0,
    now: () => clock.now,
    ...options,
  });
  const origin = await sim.listen();
  t.after(() => sim.close());
  const query = async (params: Record<string, string>, key: string | null = KEY, path = '/query'): Promise<Reply> => {
    const search = new URLSearchParams(params);
    if (key !== null) search.set('apikey', key);
    const res = await request(`${origin}${path}?${search}`);
    const text = await res.body.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, text, body };
  };
  return { sim, clock, query };
}

/** The parameters the real API requires for `fn`, with the catalogue's defaults. */
function requiredParams(fn: string, spec: IndicatorSpec, interval: string, symbol = 'MSFT'): Record<string, string> {
  const params: Record<string, string> = { function: fn, symbol, interval };
  if (spec.timePeriod !== null) params.time_period = String(spec.timePeriod);
  if (spec.seriesType) params.series_type = 'close';
  return params;
}

const DECIMAL4 = /^-?\d+\.\d{4}$/;
const ticks = (s: string) => Math.round(Number(s) * 10_000);

describe('GLOBAL_QUOTE', () => {
  test('answers the ten documented fields in their wire formats, from the shared price model', async (t) => {
    const { query } = await start(t);
    const reply = await query({ function: 'GLOBAL_QUOTE', symbol: 'MSFT' });
    assert.equal(reply.status, 200);
    assert.match(reply.contentType ?? '', /application\/json/);
    assert.deepEqual(Object.keys(reply.body), ['Global Quote']);
    const q = reply.body['Global Quote'];
    assert.deepEqual(Object.keys(q), [
      '01. symbol',
      '02. open',
      '03. high',
      '04. low',
      '05. price',
      '06. volume',
      '07. latest trading day',
      '08. previous close',
      '09. change',
      '10. change percent',
    ]);
    for (const value of Object.values(q)) assert.equal(typeof value, 'string');
    assert.equal(q['01. symbol'], 'MSFT');
    for (const field of ['02. open', '03. high', '04. low', '05. price', '08. previous close'])
      assert.match(q[field], /^\d+\.\d{4}$/, field);
    assert.match(q['09. change'], /^-?\d+\.\d{4}$/);
    assert.match(q['10. change percent'], /^-?\d+\.\d{4}%$/);
    assert.match(q['06. volume'], /^[1-9]\d*$/);
    assert.equal(q['07. latest trading day'], '2024-05-10');
    // The session so far: the price now, in cents; the previous close Thursday's at 16:00 in New York.
    assert.equal(q['05. price'], cents(priceAt('MSFT', FRIDAY)).toFixed(4));
    assert.equal(q['08. previous close'], cents(priceAt('MSFT', Date.parse('2024-05-09T20:00:00Z'))).toFixed(4));
    assert.equal(ticks(q['05. price']) - ticks(q['08. previous close']), ticks(q['09. change']));
    const percent = (Number(q['09. change']) / Number(q['08. previous close'])) * 100;
    assert.equal(q['10. change percent'], `${(Math.abs(percent) < 0.00005 ? 0 : percent).toFixed(4)}%`);
    assert.ok(Number(q['04. low']) <= Number(q['05. price']) && Number(q['05. price']) <= Number(q['03. high']));
    assert.ok(Number(q['04. low']) <= Number(q['02. open']) && Number(q['02. open']) <= Number(q['03. high']));
    // The service's own parser accepts it as data.
    const classified = classifyAlphaVantageBody(reply.body);
    assert.equal(classified.kind, 'data');
    assert.deepEqual(parseGlobalQuote(reply.body)['Global Quote'], q);
  });

  test('rises and falls are both written without a plus sign', async (t) => {
    const { query } = await start(t);
    const signs = new Set<string>();
    for (const symbol of ['AAPL', 'MSFT', 'KO', 'XOM', 'JPM', 'SPY', 'QQQ', 'IBM', 'NVDA', 'PEP', 'T', 'F']) {
      const q = (await query({ function: 'GLOBAL_QUOTE', symbol })).body['Global Quote'];
      assert.doesNotMatch(JSON.stringify(q), /\+/);
      signs.add(q['09. change'].startsWith('-') ? '-' : '+');
    }
    assert.deepEqual([...signs].sort(), ['+', '-'], 'expected both rising and falling symbols in the sample');
  });

  test('symbols are found in any case and share-class spelling', async (t) => {
    const { query } = await start(t);
    assert.equal((await query({ function: 'GLOBAL_QUOTE', symbol: 'msft' })).body['Global Quote']['01. symbol'], 'MSFT');
    assert.equal((await query({ function: 'GLOBAL_QUOTE', symbol: 'BRK-B' })).body['Global Quote']['01. symbol'], 'BRK.B');
  });

  test('an unknown symbol is an empty Global Quote; a missing one an invalid call', async (t) => {
    const { query } = await start(t);
    const unknown = await query({ function: 'GLOBAL_QUOTE', symbol: 'NOSUCH' });
    assert.equal(unknown.status, 200);
    assert.equal(unknown.text, '{"Global Quote":{}}');
    const missing = await query({ function: 'GLOBAL_QUOTE' });
    assert.deepEqual(missing.body, { 'Error Message': invalidCall('GLOBAL_QUOTE') });
  });

  test('on a weekend the latest trading day is the Friday', async (t) => {
    const { query, clock } = await start(t);
    clock.now = FRIDAY + DAY;
    assert.equal((await query({ function: 'GLOBAL_QUOTE', symbol: 'KO' })).body['Global Quote']['07. latest trading day'], '2024-05-10');
  });
});

describe('keys', () => {
  test('a missing or unknown apikey gets the documented error body, with HTTP 200', async (t) => {
    const { query } = await start(t, { callsPerDay: 1 });
    for (const key of [null, '', 'wrong-key']) {
      const reply = await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' }, key);
      assert.equal(reply.status, 200);
      assert.deepEqual(reply.body, { 'Error Message': INVALID_KEY });
    }
    // Rejected keys spent nothing of the valid key's budget.
    assert.ok('Global Quote' in (await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' })).body);
  });
});

describe('limits', () => {
  test('the default limits answer the documented per-minute Note and burst Information', async (t) => {
    const { query, clock, sim } = await start(t, { callsPerMinute: undefined, callsPerDay: undefined, burstPerSecond: undefined });
    const quote = () => query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' });
    assert.ok('Global Quote' in (await quote()).body);
    assert.deepEqual((await quote()).body, { Information: DOCUMENTED_BURST }, 'two calls within a second');
    for (let i = 0; i < 4; i += 1) {
      clock.now += 1_000;
      assert.ok('Global Quote' in (await quote()).body, `call ${i + 2} of the minute`);
    }
    clock.now += 1_000;
    assert.deepEqual((await quote()).body, { Note: DOCUMENTED_NOTE }, 'sixth call within a minute');
    assert.equal(sim.count('/query'), 7, 'limited calls still reach the server');
  });

  test('the daily cap answers the documented Information once the configured calls are spent', async (t) => {
    const { query, clock } = await start(t, { callsPerDay: 25 });
    for (let i = 0; i < 25; i += 1) assert.ok('Global Quote' in (await query({ function: 'GLOBAL_QUOTE', symbol: 'KO' })).body);
    assert.deepEqual((await query({ function: 'GLOBAL_QUOTE', symbol: 'KO' })).body, { Information: DOCUMENTED_DAILY });
    clock.now += DAY - 1;
    assert.deepEqual((await query({ function: 'RSI', symbol: 'KO', interval: 'daily', time_period: '14', series_type: 'close' })).body, {
      Information: DOCUMENTED_DAILY,
    });
    clock.now += 1;
    assert.ok(
      'Global Quote' in (await query({ function: 'GLOBAL_QUOTE', symbol: 'KO' })).body,
      'a day later the first call has left the window',
    );
  });

  test('the texts carry the configured numbers', async (t) => {
    const { query, clock } = await start(t, { callsPerMinute: 2, callsPerDay: 3, burstPerSecond: 2 });
    const quote = async () => (await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' })).body;
    assert.ok('Global Quote' in (await quote()));
    assert.ok('Global Quote' in (await quote()), 'two per second allowed');
    const minute = await quote();
    assert.match(minute.Note, /is 2 calls per minute and 3 calls per day\./);
    clock.now += 60_000;
    assert.ok('Global Quote' in (await quote()));
    assert.match((await quote()).Information, /rate limit \(3 requests per day\) and/);
  });

  test('a refused call spends nothing: the budget returns exactly when the window moves on', async (t) => {
    const { query, clock } = await start(t, { callsPerMinute: 2 });
    const quote = async () => (await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' })).body;
    assert.ok('Global Quote' in (await quote()));
    clock.now += 30_000;
    assert.ok('Global Quote' in (await quote()));
    for (let i = 0; i < 5; i += 1) assert.ok('Note' in (await quote()));
    clock.now += 29_899; // the first call is a minute old, less the 100 ms jitter allowance, less 1 ms
    assert.ok('Note' in (await quote()));
    clock.now += 1;
    assert.ok('Global Quote' in (await quote()));
    assert.ok('Note' in (await quote()));
  });

  test("with today's free plan (25 a day, 1 a second) the burst text is the one quoted in the wild, word for word", async (t) => {
    const { query } = await start(t, { callsPerDay: 25, burstPerSecond: 1 });
    await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' });
    assert.deepEqual((await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' })).body, { Information: WILD_BURST });
  });

  test('a burst limit of more than one names its rate', async (t) => {
    const { query } = await start(t, { burstPerSecond: 3 });
    for (let i = 0; i < 3; i += 1) await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' });
    assert.match((await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' })).body.Information, /\(3 requests per second\)/);
  });
});

describe('functions', () => {
  test('an unknown function is an invalid call naming it', async (t) => {
    const { query } = await start(t);
    assert.deepEqual((await query({ function: 'NOT_A_FUNCTION', symbol: 'IBM' })).body, { 'Error Message': invalidCall('NOT_A_FUNCTION') });
  });

  test('a free key gets the premium notice for the documented premium functions (configurable); a premium key gets data', async (t) => {
    const free = await start(t, { plan: 'free' });
    const vwap = { function: 'VWAP', symbol: 'IBM', interval: '15min' };
    const macd = { function: 'MACD', symbol: 'IBM', interval: 'daily', series_type: 'close' };
    for (const params of [vwap, macd, { function: 'TIME_SERIES_DAILY_ADJUSTED', symbol: 'IBM' }])
      assert.deepEqual((await free.query(params)).body, { Information: PREMIUM }, params.function);
    assert.ok(
      (await free.query({ function: 'RSI', symbol: 'IBM', interval: 'daily', time_period: '14', series_type: 'close' })).body[
        'Technical Analysis: RSI'
      ],
    );
    const custom = await start(t, { plan: 'free', premiumFunctions: ['RSI'] });
    assert.ok((await custom.query(macd)).body['Technical Analysis: MACD'], 'only the functions named are premium');
    const premium = await start(t);
    assert.ok((await premium.query(vwap)).body['Technical Analysis: VWAP']);
    assert.equal(classifyAlphaVantageBody({ Information: PREMIUM }).kind, 'error');
  });

  test('every documented function answers its demo call with data, as JSON and as CSV where it offers CSV', async (t) => {
    const { query } = await start(t);
    for (const f of ALPHA_VANTAGE_FUNCTIONS) {
      const params = demoQuery(f.name)!;
      const json = await query(params);
      assert.equal(json.status, 200, f.name);
      if (f.formats === 'csv') {
        assert.match(json.contentType ?? '', /^text\/csv/, `${f.name} answers CSV only`);
        assert.ok(parse(json.text, { columns: true }).length > 0, `${f.name} has CSV rows`);
        continue;
      }
      assert.match(json.contentType ?? '', /^application\/json/, f.name);
      assert.equal(classifyAlphaVantageBody(json.body).kind, 'data', `${f.name}: ${json.text.slice(0, 200)}`);
      const asCsv = await query({ ...params, datatype: 'csv' });
      if (f.formats === 'json') {
        assert.deepEqual(asCsv.body, json.body, `${f.name} ignores datatype=csv`);
        continue;
      }
      assert.match(asCsv.contentType ?? '', /^text\/csv/, f.name);
      const rows = parse(asCsv.text, { columns: true }) as Record<string, string>[];
      assert.ok(rows.length > 0, `${f.name} has CSV rows`);
      assert.ok(asCsv.text.endsWith('\r\n'), `${f.name}: CRLF line ends`);
    }
  });

  test('other paths are not the API', async (t) => {
    const { query } = await start(t);
    assert.equal((await query({ function: 'GLOBAL_QUOTE', symbol: 'IBM' }, KEY, '/v1/query')).status, 404);
  });
});

describe('technical indicators', () => {
  const ROW_KEY = { daily: /^\d{4}-\d{2}-\d{2}$/, '15min': /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/ } as const;
  const RANGES: Record<string, [number, number]> = {
    RSI: [0, 100],
    MFI: [0, 100],
    ULTOSC: [0, 100],
    SlowK: [0, 100],
    SlowD: [0, 100],
    'Aroon Up': [0, 100],
    'Aroon Down': [0, 100],
    ADX: [0, 100],
    ADXR: [0, 100],
    DX: [0, 100],
    PLUS_DI: [0, 100],
    MINUS_DI: [0, 100],
    WILLR: [-100, 0],
    CMO: [-100, 100],
    AROONOSC: [-100, 100],
    BOP: [-1, 1],
    SINE: [-1, 1],
    'LEAD SINE': [-1, 1],
    TRENDMODE: [0, 1],
    HT_DCPHASE: [-45, 315],
    DCPERIOD: [6, 50],
  };

  for (const interval of ['daily', '15min'] as const) {
    test(`every catalogue indicator answers its section and value keys (${interval})`, async (t) => {
      const { query } = await start(t);
      for (const fn of INDICATORS) {
        const spec = indicatorSpec(fn) as IndicatorSpec;
        // Exactly the query the service's adapter sends (required parameters plus the catalogue's extras).
        const reply = await query(technicalParams({ symbol: 'MSFT', indicator: fn, interval }));
        assert.equal(reply.status, 200, fn);
        const body = reply.body;
        assert.deepEqual(Object.keys(body), ['Meta Data', sectionKey(fn)], fn);
        const meta = body['Meta Data'];
        assert.equal(meta['1: Symbol'], 'MSFT');
        assert.equal(meta['2: Indicator'], spec.title, fn);
        assert.equal(meta['4: Interval'], interval);
        const metaKeys = Object.keys(meta);
        assert.match(metaKeys[metaKeys.length - 1] as string, /^\d: Time Zone$/, fn);
        // Spelled per indicator as the recorded answers spell it ("US/Eastern" for SMA, "US/Eastern Time" for
        // STOCH): the conformance test holds each to its recording.
        assert.match(meta[metaKeys[metaKeys.length - 1] as string], /^US\/Eastern( Time)?$/, fn);
        if (spec.timePeriod !== null) assert.equal(meta['5: Time Period'], spec.timePeriod, fn);
        else assert.equal('5: Time Period' in meta, false, fn);
        assert.equal(
          metaKeys.some((k) => /^\d: Series Type$/.test(k) && meta[k] === 'close'),
          spec.seriesType,
          fn,
        );

        const rows = Object.entries(body[sectionKey(fn)] as Record<string, Record<string, string>>);
        assert.ok(rows.length >= 50, `${fn} ${interval}: only ${rows.length} rows`);
        assert.equal(meta['3: Last Refreshed'], interval === 'daily' ? rows[0]?.[0] : `${rows[0]?.[0]}:00`, fn);
        let previous = '9999';
        for (const [time, row] of rows) {
          assert.match(time, ROW_KEY[interval], `${fn} row key ${time}`);
          assert.ok(time < previous, `${fn}: rows newest first (${time} after ${previous})`);
          previous = time;
          assert.deepEqual(Object.keys(row).sort(), [...spec.valueKeys].sort(), `${fn} value keys`);
          for (const [key, value] of Object.entries(row)) {
            assert.match(value, DECIMAL4, `${fn} ${key} ${value}`);
            const range = RANGES[key];
            if (range) assert.ok(Number(value) >= range[0] && Number(value) <= range[1], `${fn} ${key} ${value} outside ${range}`);
          }
          if (fn === 'BBANDS') {
            assert.ok(Number(row['Real Lower Band']) <= Number(row['Real Middle Band']));
            assert.ok(Number(row['Real Middle Band']) <= Number(row['Real Upper Band']));
          }
        }
        // The service's own parser accepts it.
        assert.equal(classifyAlphaVantageBody(body).kind, 'data', fn);
        parseTechnical(body, fn);
      }
    });
  }

  test('intraday rows are US/Eastern minutes inside the extended session', async (t) => {
    const { query } = await start(t);
    const body = (await query({ function: 'RSI', symbol: 'AAPL', interval: '15min', time_period: '14', series_type: 'close' })).body;
    // 11:30:00 exactly: the 11:30 bar holds no trading yet, so the newest is the 11:15 bar, cut at now.
    assert.equal(body['Meta Data']['3: Last Refreshed'], '2024-05-10 11:15:00');
    const times = Object.keys(body['Technical Analysis: RSI']);
    assert.equal(times[0], '2024-05-10 11:15');
    assert.equal(times.length, 100);
    for (const time of times) {
      const minutes = Number(time.slice(11, 13)) * 60 + Number(time.slice(14, 16));
      assert.ok(minutes >= 240 && minutes < 1200, time);
      assert.equal(minutes % 15, 0, time);
    }
    assert.ok(times.includes('2024-05-09 19:45') && !times.includes('2024-05-09 20:00'));
  });

  test('daily, weekly and monthly rows fall on trading days', async (t) => {
    const { query, clock } = await start(t);
    clock.now = FRIDAY + DAY; // Saturday
    const rsi = async (interval: string) =>
      Object.keys(
        (await query({ function: 'RSI', symbol: 'KO', interval, time_period: '14', series_type: 'close' })).body['Technical Analysis: RSI'],
      );
    const daily = await rsi('daily');
    assert.equal(daily[0], '2024-05-10');
    for (const day of daily) assert.ok(![0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay()), day);
    assert.deepEqual((await rsi('weekly')).slice(0, 3), ['2024-05-10', '2024-05-03', '2024-04-26']);
    assert.deepEqual((await rsi('monthly')).slice(0, 3), ['2024-05-10', '2024-04-30', '2024-03-29']);
  });

  test("values come from the price model: SMA(1) of closes is each session's close, today's is the price now", async (t) => {
    const { query } = await start(t);
    const rows = (await query({ function: 'SMA', symbol: 'AAPL', interval: 'daily', time_period: '1', series_type: 'close' })).body[
      'Technical Analysis: SMA'
    ];
    // Sessions close at 16:00 in New York (20:00 UTC in May), in cents as exchanges print prices.
    assert.equal(rows['2024-05-10'].SMA, cents(priceAt('AAPL', FRIDAY)).toFixed(4));
    assert.equal(rows['2024-05-09'].SMA, cents(priceAt('AAPL', Date.parse('2024-05-09T20:00:00Z'))).toFixed(4));
    assert.equal(rows['2024-05-06'].SMA, cents(priceAt('AAPL', Date.parse('2024-05-06T20:00:00Z'))).toFixed(4));
    const quote = (await query({ function: 'GLOBAL_QUOTE', symbol: 'AAPL' })).body['Global Quote'];
    assert.equal(rows['2024-05-10'].SMA, quote['05. price']);
  });

  test('an SMA is the mean of the last closes it covers', async (t) => {
    const { query } = await start(t);
    const closes = (await query({ function: 'SMA', symbol: 'JPM', interval: 'daily', time_period: '1', series_type: 'close' })).body[
      'Technical Analysis: SMA'
    ];
    const sma5 = (await query({ function: 'SMA', symbol: 'JPM', interval: 'daily', time_period: '5', series_type: 'close' })).body[
      'Technical Analysis: SMA'
    ];
    const days = Object.keys(closes).slice(0, 5);
    const mean = days.reduce((sum, d) => sum + Number(closes[d].SMA), 0) / 5;
    assert.ok(Math.abs(Number(sma5[days[0] as string].SMA) - mean) < 0.0005, `${sma5[days[0] as string].SMA} vs ${mean}`);
  });

  test('parameters change the result and are reported in Meta Data', async (t) => {
    const { query } = await start(t);
    const rsi = async (period: string) =>
      (await query({ function: 'RSI', symbol: 'NVDA', interval: 'daily', time_period: period, series_type: 'close' })).body;
    const r7 = await rsi('7');
    const r14 = await rsi('14');
    assert.equal(r7['Meta Data']['5: Time Period'], 7);
    assert.notEqual(r7['Technical Analysis: RSI']['2024-05-10'].RSI, r14['Technical Analysis: RSI']['2024-05-10'].RSI);
    const sma = async (seriesType: string) =>
      Number(
        (await query({ function: 'SMA', symbol: 'NVDA', interval: 'daily', time_period: '10', series_type: seriesType })).body[
          'Technical Analysis: SMA'
        ]['2024-05-10'].SMA,
      );
    assert.ok((await sma('high')) > (await sma('low')));
    const macd = (
      await query({
        function: 'MACD',
        symbol: 'NVDA',
        interval: 'daily',
        series_type: 'close',
        fastperiod: '5',
        slowperiod: '35',
        signalperiod: '5',
      })
    ).body;
    assert.deepEqual(Object.entries(macd['Meta Data']).slice(4), [
      ['5.1: Fast Period', 5],
      ['5.2: Slow Period', 35],
      ['5.3: Signal Period', 5],
      ['6: Series Type', 'close'],
      ['7: Time Zone', 'US/Eastern'],
    ]);
  });

  test("extra parameters follow Alpha Vantage's Meta Data layout", async (t) => {
    const { query } = await start(t);
    const metaTail = async (params: Record<string, string>) =>
      Object.keys((await query({ symbol: 'IBM', interval: 'daily', ...params })).body['Meta Data']).slice(4);
    assert.deepEqual(await metaTail({ function: 'BBANDS', time_period: '20', series_type: 'close' }), [
      '5: Time Period',
      '6.1: Deviation multiplier for upper band',
      '6.2: Deviation multiplier for lower band',
      '6.3: MA Type',
      '7: Series Type',
      '8: Time Zone',
    ]);
    assert.deepEqual(await metaTail({ function: 'STOCH' }), [
      '5.1: FastK Period',
      '5.2: SlowK Period',
      '5.3: SlowK MA Type',
      '5.4: SlowD Period',
      '5.5: SlowD MA Type',
      '6: Time Zone',
    ]);
    assert.deepEqual(await metaTail({ function: 'T3', time_period: '10', series_type: 'close' }), [
      '5: Time Period',
      '6: Volume Factor (vFactor)',
      '7: Series Type',
      '8: Time Zone',
    ]);
    assert.deepEqual(await metaTail({ function: 'SAR' }), ['5.1: Acceleration', '5.2: Maximum', '6: Time Zone']);
    assert.deepEqual(await metaTail({ function: 'ULTOSC' }), [
      '5.1: Time Period 1',
      '5.2: Time Period 2',
      '5.3: Time Period 3',
      '6: Time Zone',
    ]);
    assert.deepEqual(await metaTail({ function: 'HT_SINE', series_type: 'open' }), ['5: Series Type', '6: Time Zone']);
    assert.deepEqual(await metaTail({ function: 'OBV' }), ['5: Time Zone']);
    assert.deepEqual(await metaTail({ function: 'ADX', time_period: '14' }), ['5: Time Period', '6: Time Zone']);
  });

  test('required parameters missing or malformed make an invalid call naming the function', async (t) => {
    const { query } = await start(t);
    for (const fn of INDICATORS) {
      const spec = indicatorSpec(fn) as IndicatorSpec;
      const valid = requiredParams(fn, spec, 'daily');
      const broken: Array<Record<string, string>> = [
        { ...valid, interval: '2min' },
        { ...valid, symbol: 'NOSUCH' },
      ];
      const { interval: _interval, ...noInterval } = valid;
      const { symbol: _symbol, ...noSymbol } = valid;
      broken.push(noInterval, noSymbol);
      if (spec.timePeriod !== null) {
        const { time_period: _tp, ...noPeriod } = valid;
        broken.push(noPeriod, { ...valid, time_period: '0' }, { ...valid, time_period: 'abc' }, { ...valid, time_period: '2.5' });
      }
      if (spec.seriesType) {
        const { series_type: _st, ...noSeries } = valid;
        broken.push(noSeries, { ...valid, series_type: 'median' });
      }
      for (const params of broken) {
        assert.deepEqual((await query(params)).body, { 'Error Message': invalidCall(fn) }, `${fn} ${JSON.stringify(params)}`);
      }
    }
    assert.deepEqual(
      (await query({ function: 'BBANDS', symbol: 'IBM', interval: 'daily', time_period: '20', series_type: 'close', matype: '9' })).body,
      {
        'Error Message': invalidCall('BBANDS'),
      },
    );
  });

  test('every moving-average type BBANDS accepts gives bands', async (t) => {
    const { query } = await start(t);
    for (let matype = 0; matype <= 8; matype += 1) {
      const body = (
        await query({
          function: 'BBANDS',
          symbol: 'IBM',
          interval: 'daily',
          time_period: '20',
          series_type: 'close',
          matype: String(matype),
        })
      ).body;
      assert.equal(body['Meta Data']['6.3: MA Type'], matype);
      assert.ok(Object.keys(body['Technical Analysis: BBANDS']).length > 0, `matype ${matype}`);
    }
  });
});

describe('SYMBOL_SEARCH', () => {
  test('symbol prefixes rank above name matches, at most ten, in the documented shape', async (t) => {
    const { query } = await start(t);
    const exact = await query({ function: 'SYMBOL_SEARCH', keywords: 'ibm' });
    const best = parseSymbolSearch(exact.body).bestMatches;
    assert.equal(best[0]?.['1. symbol'], 'IBM');
    assert.equal(best[0]?.['9. matchScore'], '1.0000');
    assert.equal(best[0]?.['7. timezone'], 'UTC-04', 'daylight time on 2024-05-10');
    const broad = parseSymbolSearch((await query({ function: 'SYMBOL_SEARCH', keywords: 'a' })).body).bestMatches;
    assert.equal(broad.length, 10);
    const scores = broad.map((m) => Number(m['9. matchScore']));
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
      'best first',
    );
    assert.deepEqual((await query({ function: 'SYMBOL_SEARCH', keywords: 'qqqzzz' })).body, { bestMatches: [] });
    assert.deepEqual((await query({ function: 'SYMBOL_SEARCH' })).body, { 'Error Message': invalidCall('SYMBOL_SEARCH') });
  });
});

describe('TIME_SERIES', () => {
  test('daily, weekly, monthly and intraday series in the documented shapes, consistent with the price model', async (t) => {
    const { query } = await start(t);
    const daily = parseTimeSeries((await query({ function: 'TIME_SERIES_DAILY', symbol: 'msft' })).body, 'TIME_SERIES_DAILY');
    const rows = Object.entries(daily['Time Series (Daily)']!);
    assert.equal(rows.length, 100);
    assert.equal(rows[0]?.[0], '2024-05-10');
    assert.deepEqual(daily['Meta Data'], {
      '1. Information': 'Daily Prices (open, high, low, close) and Volumes',
      '2. Symbol': 'MSFT',
      '3. Last Refreshed': '2024-05-10',
      '4. Output Size': 'Compact',
      '5. Time Zone': 'US/Eastern',
    });
    const thursday = daily['Time Series (Daily)']!['2024-05-09']!;
    assert.equal(thursday['4. close'], cents(priceAt('MSFT', Date.parse('2024-05-09T20:00:00Z'))).toFixed(4));
    assert.equal(thursday['1. open'], cents(priceAt('MSFT', Date.parse('2024-05-09T13:30:00Z'))).toFixed(4));
    for (const [, row] of rows) {
      assert.ok(Number(row['3. low']) <= Math.min(Number(row['1. open']), Number(row['4. close'])));
      assert.ok(Number(row['2. high']) >= Math.max(Number(row['1. open']), Number(row['4. close'])));
    }
    const full = (await query({ function: 'TIME_SERIES_DAILY', symbol: 'MSFT', outputsize: 'full' })).body;
    assert.equal(full['Meta Data']['4. Output Size'], 'Full size');
    assert.ok(Object.keys(full['Time Series (Daily)']).length > 100);
    const weekly = parseTimeSeries((await query({ function: 'TIME_SERIES_WEEKLY', symbol: 'MSFT' })).body, 'TIME_SERIES_WEEKLY');
    assert.equal(Object.keys(weekly['Weekly Time Series']!)[1], '2024-05-03', 'weeks are keyed by their last trading day');
    const monthly = parseTimeSeries((await query({ function: 'TIME_SERIES_MONTHLY', symbol: 'MSFT' })).body, 'TIME_SERIES_MONTHLY');
    assert.equal(Object.keys(monthly['Monthly Time Series']!)[1], '2024-04-30');
    const intraday = (await query({ function: 'TIME_SERIES_INTRADAY', symbol: 'MSFT', interval: '5min' })).body;
    parseTimeSeries(intraday, 'TIME_SERIES_INTRADAY', '5min');
    assert.equal(intraday['Meta Data']['3. Last Refreshed'], '2024-05-10 11:25:00');
    assert.equal(intraday['Meta Data']['4. Interval'], '5min');
  });

  test('bad calls get the Invalid API call body, as the real API answers them', async (t) => {
    const { query } = await start(t);
    const bad: Array<Record<string, string>> = [
      { function: 'TIME_SERIES_DAILY', symbol: 'ZZZZQX' },
      { function: 'TIME_SERIES_DAILY', symbol: 'MSFT', outputsize: 'huge' },
      { function: 'TIME_SERIES_INTRADAY', symbol: 'MSFT' },
      { function: 'TIME_SERIES_INTRADAY', symbol: 'MSFT', interval: '5min', month: '2024-13' },
    ];
    for (const params of bad) {
      assert.deepEqual((await query(params)).body, { 'Error Message': invalidCall(params.function!) }, JSON.stringify(params));
    }
    const weekly = await query({ function: 'TIME_SERIES_WEEKLY', symbol: 'MSFT', outputsize: 'huge' });
    assert.ok(weekly.body['Weekly Time Series'], 'weekly takes no outputsize, so it ignores one');
  });
});

describe('determinism', () => {
  test('the same request at the same moment gives the same body; later prices have moved', async (t) => {
    const a = await start(t);
    const b = await start(t);
    const params: Array<Record<string, string>> = [
      { function: 'GLOBAL_QUOTE', symbol: 'AAPL' },
      { function: 'MACD', symbol: 'AAPL', interval: 'daily', series_type: 'close' },
      { function: 'OBV', symbol: 'AAPL', interval: '5min' },
    ];
    const first = await Promise.all(params.map((p) => a.query(p)));
    const again = await Promise.all(params.map((p) => a.query(p)));
    const other = await Promise.all(params.map((p) => b.query(p)));
    for (let i = 0; i < params.length; i += 1) {
      assert.equal(again[i]?.text, first[i]?.text);
      assert.equal(other[i]?.text, first[i]?.text, 'a second simulator agrees');
    }
    a.clock.now += 3 * 3_600_000;
    const later = await a.query(params[0] as Record<string, string>);
    assert.notEqual(later.body['Global Quote']['05. price'], first[0]?.body['Global Quote']['05. price']);
    const laterMacd = (await a.query(params[1] as Record<string, string>)).body['Technical Analysis: MACD']['2024-05-10'];
    assert.notDeepEqual(laterMacd, first[1]?.body['Technical Analysis: MACD']['2024-05-10'], "today's row moves with the price");
  });

  test('a past row keeps its value as time moves on', async (t) => {
    const { query, clock } = await start(t);
    const row = async () =>
      (await query({ function: 'RSI', symbol: 'MSFT', interval: 'daily', time_period: '14', series_type: 'close' })).body[
        'Technical Analysis: RSI'
      ]['2024-05-01'];
    const before = await row();
    clock.now += 4 * 3_600_000;
    assert.deepEqual(await row(), before);
  });
});
