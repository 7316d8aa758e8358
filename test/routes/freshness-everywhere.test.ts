// Every answer that carries a price says how fresh it is. The walk goes over every route the OpenAPI
// document lists and every stream topic: each either carries prices (and is asked, here, for what it says)
// or is named below with the reason it carries none. A new route or topic in neither list fails with its name.
// JSON bodies of this service's own shape carry a `freshness` object per price holder; Alpha Vantage-shaped
// ones, which stay the provider's byte for byte, the X-Data-Freshness header, also when the hot path answers.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { FRESHNESS_KINDS } from '../../src/core/freshness.js';
import { type RunningApp, startApp, type TestResponse } from '../helpers/app.js';
import { UNCAPPED } from '../helpers/config.js';
import { SseClient } from '../stream/sse-client.js';

const HEADER = /^(realtime|delayed|end-of-day|frozen|prior-close|halted|unknown)(; minutes=\d+)?; as-of=\d{4}-\d{2}-\d{2}\S*$/;

/** A price's freshness as the contract writes it: a kind, a date or date-time, the optional fields of their types. */
function assertFreshness(value: unknown, where: string): void {
  const f = value as Record<string, unknown> | undefined;
  assert.ok(f !== undefined && typeof f === 'object', `${where}: no freshness`);
  assert.ok((FRESHNESS_KINDS as readonly string[]).includes(String(f.kind)), `${where}: kind ${String(f.kind)}`);
  assert.match(String(f.asOf), /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?Z)?$/, `${where}: asOf`);
  if (f.delayMinutes !== undefined) assert.equal(typeof f.delayMinutes, 'number', `${where}: delayMinutes`);
}

const byHeader = (res: TestResponse, where: string) => {
  assert.equal(res.status, 200, `${where}: ${res.text.slice(0, 200)}`);
  assert.match(String(res.headers['x-data-freshness']), HEADER, `${where}: X-Data-Freshness`);
};
const perEntry = (pick: (body: any) => Record<string, { freshness?: unknown }>) => (res: TestResponse, where: string) => {
  assert.equal(res.status, 200, `${where}: ${res.text.slice(0, 200)}`);
  const entries = Object.entries(pick(res.body));
  assert.ok(entries.length > 0, `${where}: nothing to check`);
  for (const [key, entry] of entries) assertFreshness(entry.freshness, `${where} ${key}`);
};

/** Routes that carry prices: the requests that show each kind of answer, and how each says its freshness. */
const PRICED: Record<string, { paths: string[]; check: (res: TestResponse, where: string) => void }> = {
  '/api/provider-a/quote': { paths: ['/api/provider-a/quote?symbol=IBM'], check: byHeader },
  '/api/provider-a/daily': { paths: ['/api/provider-a/daily?symbol=IBM'], check: byHeader },
  // The Alpha Vantage functions that carry prices: the quote and the time series.
  '/api/provider-a/query': {
    paths: [
      '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=MSFT',
      '/api/provider-a/query?function=TIME_SERIES_DAILY&symbol=MSFT',
      '/api/provider-a/query?function=TIME_SERIES_WEEKLY&symbol=MSFT',
      '/api/provider-a/query?function=TIME_SERIES_MONTHLY&symbol=MSFT',
      '/api/provider-a/query?function=TIME_SERIES_INTRADAY&symbol=MSFT&interval=5min',
    ],
    check: byHeader,
  },
  '/api/market/overview': { paths: ['/api/market/overview'], check: perEntry((body) => body) },
  '/api/broker/quotes': { paths: ['/api/broker/quotes?symbols=AAPL,MSFT,SPY'], check: perEntry((body) => body.quotes) },
  '/api/broker/positions': {
    paths: ['/api/broker/positions'],
    check: perEntry((body) => Object.fromEntries((body.positions as object[]).map((p, i) => [String(i), p]))),
  },
};

/** Routes without a price, each with the reason. */
const UNPRICED: Record<string, string> = {
  '/api/provider-a/technical': 'indicator values computed from prices, not prices',
  '/api/provider-a/search': 'symbol matches: names, regions, hours, no price',
  '/api/provider-b/dividends': 'declared cash amounts and dates, not market prices',
  '/api/broker/health': 'the connection state',
  '/api/broker/accounts': 'account ids, names and types',
  '/api/broker/stream-ticket': 'a one-time ticket',
  '/api/stream': 'walked topic by topic below',
  '/api/system/status': 'counters and states of the service',
  '/api/system/live': 'liveness',
  '/api/system/ready': 'readiness',
  '/metrics': 'Prometheus counters and histograms of the service',
  '/mcp':
    "JSON-RPC for AI agents: its tools read the routes above, their prices with those routes' freshness (test/routes/mcp/tools.test.ts)",
};

/** Stream topics that carry prices, and where each event's freshness is; `status` carries none. */
const TOPICS: Record<string, { query: string; check: (data: any, where: string) => void }> = {
  quote: { query: 'quote=IBM', check: (data, where) => assertFreshness(data.freshness, where) },
  brokerQuotes: {
    query: 'brokerQuotes=AAPL,MSFT',
    check: (data, where) => {
      for (const [symbol, quote] of Object.entries(data.quotes as Record<string, { freshness: unknown }>))
        assertFreshness(quote.freshness, `${where} ${symbol}`);
    },
  },
  overview: {
    query: 'overview=true',
    check: (data, where) => {
      for (const [symbol, entry] of Object.entries(data as Record<string, { freshness: unknown }>))
        assertFreshness(entry.freshness, `${where} ${symbol}`);
    },
  },
};
const UNPRICED_TOPICS: Record<string, string> = { status: 'the /api/system/status body' };

async function documentedRoutes(running: RunningApp): Promise<string[]> {
  const document = (await running.get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  return Object.keys(document.paths);
}

test('every documented route either carries prices and says how fresh each is, or carries none, for a reason', async (t) => {
  const running = await startApp(t, { env: UNCAPPED, transport: 'socket' });
  const routes = await documentedRoutes(running);
  assert.deepEqual(
    routes.filter((path) => PRICED[path] === undefined && UNPRICED[path] === undefined),
    [],
    'routes in neither list: does each carry a price?',
  );
  assert.deepEqual(
    [...Object.keys(PRICED), ...Object.keys(UNPRICED)].filter((path) => !routes.includes(path)),
    [],
    'listed routes the document does not have',
  );
  for (const [route, { paths, check }] of Object.entries(PRICED)) {
    for (const path of paths) {
      check(await running.get(path), path);
      // Again, now from the cache (the hot path where it answers): the statement comes with every answer.
      const again = await running.get(path);
      check(again, `${path} (${String(again.headers['x-cache'])})`);
    }
    assert.ok(routes.includes(route));
  }
  // The hot path replays the header set the pipeline produced for a fresh entry: the freshness included.
  assert.ok(running.app.hotPath.served > 0, 'some repeats were answered by the hot path');
});

test('the Tastytrade broker says it too, on quotes and positions', async (t) => {
  const running = await startApp(t, { env: { ...UNCAPPED, BROKER: 'tastytrade' } });
  for (const route of ['/api/broker/quotes', '/api/broker/positions'])
    for (const path of PRICED[route]!.paths) PRICED[route]!.check(await running.get(path), `tastytrade ${path}`);
});

/** The first event of each topic of one stream. */
async function firstEvents(t: TestContext, running: RunningApp, query: string): Promise<Map<string, any>> {
  const stream = await SseClient.open(t, `${running.url}/api/stream?${query}`);
  assert.equal(stream.status, 200, stream.body);
  const wanted = Object.keys(TOPICS);
  await stream.until((s) => wanted.every((kind) => s.events.some((e) => e.event === kind)), 'an event of every priced topic');
  return new Map(wanted.map((kind) => [kind, JSON.parse(stream.events.find((e) => e.event === kind)?.data ?? 'null')]));
}

test('every stream topic either carries prices and says how fresh each is, or carries none', async (t) => {
  const running = await startApp(t, { env: UNCAPPED });
  const document = (await running.get('/api/openapi.json')).body as any;
  const topics = (document.paths['/api/stream'].get.parameters as { name: string }[])
    .map((p) => p.name)
    .filter((name) => name !== 'ticket');
  assert.deepEqual(
    topics.filter((name) => TOPICS[name] === undefined && UNPRICED_TOPICS[name] === undefined),
    [],
    'stream topics in neither list',
  );
  const events = await firstEvents(
    t,
    running,
    Object.values(TOPICS)
      .map((topic) => topic.query)
      .join('&'),
  );
  for (const [kind, { check }] of Object.entries(TOPICS)) check(events.get(kind), `stream ${kind}`);
});
