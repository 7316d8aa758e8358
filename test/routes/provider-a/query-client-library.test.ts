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
