// Each MCP tool against its REST route, with the official SDK's client over real HTTP on loopback: the tool reads
// the route's cache entry (the REST answer that follows is a HIT) and carries its values, source and freshness.
// The client holds every structured answer to the tool's output schema as it receives it.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freshnessHeader } from '../../../src/core/freshness.js';
import { listedTool, TOOLS } from '../../../src/routes/mcp/tools.js';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { UNCAPPED } from '../../helpers/config.js';
import { callTool, mcpClient } from '../../helpers/mcp-client.js';

/** Windows long enough that a tool's answer and the REST answer after it share one entry on a slow machine. */
const LONG_WINDOWS = { CACHE_BROKER_QUOTES_FRESH_SECONDS: '600', CACHE_BROKER_POSITIONS_FRESH_SECONDS: '600', BROKER_STREAMING: 'off' };

async function setUp(
  t: TestContext,
): Promise<{ running: RunningApp; call: (name: string, args?: Record<string, unknown>) => Promise<any> }> {
  const running = await startApp(t, { env: { ...UNCAPPED, ...LONG_WINDOWS, BROKER: 'ibkr' }, transport: 'socket' });
  const client = await mcpClient(t, running);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await callTool(client, name, args);
    assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  };
  return { running, call };
}

/** The REST answer, which must be the entry the tool just read. */
async function cached(running: RunningApp, path: string): Promise<TestResponse> {
  const res = await running.get(path);
  assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
  assert.equal(res.headers['x-cache'], 'HIT', `${path}: the tool's entry`);
  return res;
}

const num = (text: string) => Number(text.replace(/%$/, ''));

test('get_quotes, get_price_history, get_indicator and search_symbols carry the values, source and freshness of their REST routes', async (t) => {
  const { running, call } = await setUp(t);

  const quotes = await call('get_quotes', { symbols: ['IBM', 'msft'] });
  assert.deepEqual(
    quotes.quotes.map((q: { symbol: string }) => q.symbol),
    ['IBM', 'MSFT'],
  );
  for (const quote of quotes.quotes) {
    const res = await cached(running, `/api/provider-a/quote?symbol=${quote.symbol}`);
    const q = res.body['Global Quote'];
    assert.deepEqual(
      [
        quote.price,
        quote.change,
        quote.changePercent,
        quote.volume,
        quote.open,
        quote.high,
        quote.low,
        quote.previousClose,
        quote.tradingDay,
      ],
      [
        num(q['05. price']),
        num(q['09. change']),
        num(q['10. change percent']),
        num(q['06. volume']),
        num(q['02. open']),
        num(q['03. high']),
        num(q['04. low']),
        num(q['08. previous close']),
        q['07. latest trading day'],
      ],
    );
    assert.equal(quote.source, res.headers['x-data-source']);
    assert.equal(freshnessHeader(quote.freshness), res.headers['x-data-freshness']);
  }

  const history = await call('get_price_history', { symbol: 'IBM', limit: 5 });
  const daily = await cached(running, '/api/provider-a/daily?symbol=IBM');
  const rows = Object.entries(daily.body['Time Series (Daily)'] as Record<string, Record<string, string>>).slice(0, 5);
  assert.deepEqual(
    history.bars,
    rows.map(([time, r]) => ({
      time,
      open: num(r['1. open'] as string),
      high: num(r['2. high'] as string),
      low: num(r['3. low'] as string),
      close: num(r['4. close'] as string),
      volume: num(r['5. volume'] as string),
    })),
  );
  assert.equal(freshnessHeader(history.freshness), daily.headers['x-data-freshness']);

  const rsi = await call('get_indicator', { symbol: 'IBM', indicator: 'rsi', time_period: 10, limit: 4 });
  const technical = await cached(running, '/api/provider-a/technical?symbol=IBM&indicator=RSI&time_period=10');
  const series = Object.entries(technical.body['Technical Analysis: RSI'] as Record<string, { RSI: string }>).slice(0, 4);
  assert.deepEqual(
    rsi.values,
    series.map(([time, v]) => ({ time, RSI: num(v.RSI) })),
  );
  assert.equal(rsi.source, technical.headers['x-data-source']);
  assert.deepEqual(rsi.meta, technical.body['Meta Data']);

  const search = await call('search_symbols', { keywords: 'micro' });
  const matches = (await cached(running, '/api/provider-a/search?keywords=micro')).body.bestMatches as Record<string, string>[];
  assert.ok(matches.length > 0);
  assert.deepEqual(
    search.matches.map((m: Record<string, unknown>) => [m.symbol, m.name, m.region, m.currency, m.matchScore]),
    matches.map((m) => [m['1. symbol'], m['2. name'], m['4. region'], m['8. currency'], num(m['9. matchScore'] as string)]),
  );
});

test('get_dividends, get_market_overview and alpha_vantage carry the values of their REST routes', async (t) => {
  const { running, call } = await setUp(t);

  const dividends = await call('get_dividends', { symbol: 'AAPL', limit: 3 });
  const page = (await cached(running, '/api/provider-b/dividends?symbol=AAPL&limit=3')).body;
  assert.deepEqual(dividends.dividends, page.results);
  assert.equal(dividends.nextCursor, new URLSearchParams(page.next.split('?')[1]).get('cursor'));
  // The cursor the tool gave reads the page the REST link reads.
  const second = await call('get_dividends', { symbol: 'AAPL', limit: 3, cursor: dividends.nextCursor });
  assert.deepEqual(second.dividends, (await cached(running, page.next)).body.results);

  const overview = await call('get_market_overview');
  const entries = (await cached(running, '/api/market/overview')).body as Record<string, Record<string, string>>;
  assert.deepEqual(
    overview.instruments.map((i: Record<string, unknown>) => i.symbol),
    Object.keys(entries),
  );
  for (const instrument of overview.instruments) {
    const { price, change, changePercent, ...rest } = entries[instrument.symbol] as Record<string, string>;
    assert.deepEqual(instrument, {
      symbol: instrument.symbol,
      ...rest,
      price: num(price!),
      change: num(change!),
      changePercent: num(changePercent!),
    });
  }

  const fundamentals = await call('alpha_vantage', { function: 'overview', parameters: { symbol: 'IBM' } });
  const rest = await cached(running, '/api/provider-a/query?function=OVERVIEW&symbol=IBM');
  assert.deepEqual(fundamentals.data, rest.body);
  assert.equal(fundamentals.source, 'alpha-vantage');
  const csv = await call('alpha_vantage', { function: 'TIME_SERIES_DAILY', parameters: { symbol: 'IBM', datatype: 'csv' } });
  const csvRest = await cached(running, '/api/provider-a/query?function=TIME_SERIES_DAILY&symbol=IBM&datatype=csv');
  assert.equal(csv.format, 'csv');
  assert.equal(csv.data, csvRest.text);
  assert.equal(freshnessHeader(csv.freshness), csvRest.headers['x-data-freshness']);
});

test('get_service_status gives the budgets /api/system/status gives', async (t) => {
  const { running, call } = await setUp(t);
  await running.get('/api/provider-a/quote?symbol=IBM');
  const tool = await call('get_service_status');
  const rest = (await running.get('/api/system/status')).body;
  assert.equal(tool.status, rest.status);
  assert.deepEqual(
    tool.upstreams.map((u: Record<string, unknown>) => [u.id, u.state, u.budget]),
    rest.upstreams.map((u: Record<string, unknown>) => [u.id, u.state, u.budget]),
  );
  assert.ok(tool.upstreams.some((u: { budget: unknown }) => u.budget !== null));
});

test('the broker tools carry the values of the broker routes to an allowed caller', async (t) => {
  const { running, call } = await setUp(t);
  const health = await call('get_broker_health');
  const restHealth = (await running.get('/api/broker/health')).body;
  // Checked live, at most once every 1.5 s: the check's time may differ, its outcome not.
  const { checkedAt: _a, latencyMs: _b, ...state } = health;
  const { checkedAt: _c, latencyMs: _d, ...restState } = restHealth;
  assert.deepEqual(state, restState);
  assert.equal(health.status, 'connected');

  assert.deepEqual(await call('get_broker_accounts'), (await cached(running, '/api/broker/accounts')).body);
  assert.deepEqual(await call('get_broker_positions'), (await cached(running, '/api/broker/positions')).body);
  const quotes = await call('get_broker_quotes', { symbols: ['MSFT', 'AAPL', 'NOPE1'] });
  const rest = await cached(running, '/api/broker/quotes?symbols=AAPL,MSFT,NOPE1');
  assert.deepEqual(quotes, { ...rest.body, source: rest.headers['x-data-source'] });
});

test('tools/list is at most 16 KB, every tool says when to use it, and every listed schema stands alone', async (t) => {
  const running = await startApp(t, { transport: 'socket' });
  const client = await mcpClient(t, running);
  const listed = await client.listTools();
  const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: listed }));
  assert.ok(bytes <= 16 * 1024, `tools/list is ${bytes} bytes`);
  assert.deepEqual(
    listed.tools.map((tool) => tool.name),
    TOOLS.map((tool) => tool.name),
  );
  for (const tool of listed.tools) {
    assert.ok(tool.description !== undefined && /Use it|Use the|this one/.test(tool.description), `${tool.name} says when to use it`);
    assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
    assert.equal(tool.annotations?.readOnlyHint, true, `${tool.name} is read-only`);
    assert.ok(!JSON.stringify(tool).includes('$ref'), `${tool.name}: no reference left`);
  }
  assert.deepEqual(
    listed.tools,
    TOOLS.map(listedTool).map((tool) => JSON.parse(JSON.stringify(tool))),
  );
});

test('no provider key, broker token or proxy credential in any tool result (the secret scan sees every MCP answer)', async (t) => {
  const brokerToken = 'broker-token-of-32-characters-xx';
  const running = await startApp(t, {
    env: { BROKER_TOKEN: brokerToken, MCP_TOKEN: 'mcp-token-of-32-characters-xxxxx' },
    transport: 'socket',
  });
  const client = await mcpClient(t, running, { headers: { authorization: `Bearer ${brokerToken}` } });
  const results: CallToolResult[] = [];
  for (const tool of TOOLS) {
    const args = {
      get_quotes: { symbols: ['IBM'] },
      get_price_history: { symbol: 'IBM' },
      get_indicator: { symbol: 'IBM', indicator: 'SMA' },
    }[tool.name] ?? { symbols: ['AAPL'], keywords: 'apple', function: 'OVERVIEW', parameters: { symbol: 'IBM', apikey: 'caller-key' } };
    const known = Object.keys((tool.input as { properties: object }).properties);
    results.push(await callTool(client, tool.name, Object.fromEntries(Object.entries(args).filter(([name]) => known.includes(name)))));
  }
  // Every tool's success answer is scanned: four of provider A's calls (a lone caller's share of five a minute, the
  // reserve kept), the indicator from the fallback, the rest from their own upstreams.
  const failed = TOOLS.map((tool, i) => [tool.name, results[i]!] as const)
    .filter(([, result]) => result.isError === true)
    .map(([name, result]) => [name, result.structuredContent]);
  assert.deepEqual(failed, [], JSON.stringify(failed));
  // The scan itself runs when the test ends, over these answers and every log line.
  assert.ok(running.scan.responses.length >= TOOLS.length);
});
