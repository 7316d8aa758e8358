// Every route reads its parameters by the one text rule (core/parameter-text.ts): a value holding a character
// that has no place in it is a 400 naming the parameter and the character, at no upstream cost, on the
// drop-in and on every REST route alike; surrounding spaces and the letter case of an enum are one spelling,
// so one cache entry and one upstream call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { hex, REFUSED_CHARACTERS } from '../../helpers/refused-characters.js';

/** About what requests cost, not the budget's pacing: no budget to wait on, provider A alone, broker snapshots. */
const ENV = { ...UNCAPPED, ...NO_FALLBACK, BROKER_STREAMING: 'off' };

/** What the requests cost upstream: market data calls, and the broker's symbol look-ups and snapshots. */
function upstreamCalls({ sandbox }: RunningApp): number {
  const market = sandbox.alphaVantage.count() + sandbox.yahoo.count() + sandbox.massive.count();
  return market + sandbox.ibkr.gatewayCount('/iserver/secdef/search') + sandbox.ibkr.gatewayCount('/iserver/marketdata/snapshot');
}

/** A request per route and parameter read, `{}` where the character goes: enums, patterns and free strings. */
const PLACES: ReadonlyArray<[parameter: string, path: string]> = [
  ['symbol', '/api/provider-a/quote?symbol={}IBM'],
  ['interval', '/api/provider-a/technical?symbol=IBM&interval=daily{}'],
  ['time_period', '/api/provider-a/technical?symbol=IBM&indicator=RSI&time_period=1{}4'],
  ['outputsize', '/api/provider-a/daily?symbol=IBM&outputsize={}full'],
  ['keywords', '/api/provider-a/search?keywords=mi{}cro'],
  ['function', '/api/provider-a/query?function=GLOBAL_QUOTE{}&symbol=IBM'],
  ['symbol', '/api/provider-a/query?function=GLOBAL_QUOTE&symbol={}IBM'],
  ['symbol', '/api/provider-a/query?function=OVERVIEW&symbol=IBM{}'],
  ['interval', '/api/provider-a/query?function=WTI&interval={}monthly'],
  ['keywords', '/api/provider-a/query?function=SYMBOL_SEARCH&keywords=micro{}'],
  ['symbol', '/api/provider-b/dividends?symbol={}AAPL'],
  ['symbols', '/api/broker/quotes?symbols=AAPL,{}MSFT'],
  ['quote', '/api/stream?quote=IBM,MSFT{}'],
];

test('every refused character is a 400 naming the parameter and the character, with no upstream call, on every route; a parameter not read stays ignored', async (t) => {
  const running = await startApp(t, { env: ENV });
  for (const [parameter, path] of PLACES) {
    for (const [code, kind] of REFUSED_CHARACTERS) {
      const url = path.replace('{}', encodeURIComponent(String.fromCodePoint(code)));
      const res = await running.get(url);
      assert.equal(res.status, 400, `${url}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.error.code, 'INVALID_PARAMETER', url);
      assert.equal(res.body.error.message, `${parameter} contains ${hex(code)} (${kind}), which has no place in a value`, url);
      if (path.startsWith('/api/provider-a/query')) assert.equal(res.body['Error Message'], res.body.error.message, url);
    }
  }
  assert.equal(upstreamCalls(running), 0);
  // A parameter the function does not take is not read: ignored whatever it holds, as Alpha Vantage ignores it.
  const quote = await running.get('/api/provider-a/query?function=GLOBAL_QUOTE&symbol=IBM&fastperiod=%C2%A012&month=%00');
  assert.equal(quote.status, 200, quote.text);
  const rsi = await running.get('/api/provider-a/technical?symbol=IBM&indicator=RSI&fastperiod=%E2%80%AE12');
  assert.equal(rsi.status, 200, rsi.text);
});

test('surrounding spaces and an enum in any case are one spelling on the REST routes: one entry, one upstream call', async (t) => {
  const running = await startApp(t, { env: ENV, transport: 'socket' });
  const pairs: ReadonlyArray<[canonical: string, variant: string]> = [
    ['/api/provider-a/quote?symbol=IBM', '/api/provider-a/quote?symbol=%20ibm%20'],
    ['/api/provider-a/daily?symbol=IBM&outputsize=full', '/api/provider-a/daily?symbol=+IBM&outputsize=FULL%20'],
    [
      '/api/provider-a/technical?symbol=IBM&indicator=RSI&interval=weekly',
      '/api/provider-a/technical?symbol=IBM%20&indicator=rsi&interval=%20Weekly',
    ],
    ['/api/provider-a/search?keywords=micro', '/api/provider-a/search?keywords=%20Micro%E3%80%80'],
    ['/api/provider-b/dividends?symbol=AAPL&limit=5', '/api/provider-b/dividends?symbol=aapl%20&limit=%205'],
    ['/api/broker/quotes?symbols=AAPL,MSFT', '/api/broker/quotes?symbols=%20MSFT%20,aapl%20'],
  ];
  for (const [canonical, variant] of pairs) {
    const first = await running.get(canonical);
    assert.equal(first.status, 200, `${canonical}: ${first.text.slice(0, 200)}`);
    const calls = upstreamCalls(running);
    const again = await running.get(variant);
    assert.equal(again.status, 200, `${variant}: ${again.text.slice(0, 200)}`);
    assert.equal(again.headers['x-cache'], 'HIT', variant);
    assert.equal(upstreamCalls(running), calls, `${variant} cost an upstream call`);
  }
});
