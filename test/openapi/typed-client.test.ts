// A client generated from the published document by tools we did not write (openapi-typescript for the
// types, openapi-fetch for the calls): a program calling every operation must type-check under strict tsc,
// including a real technical-indicator body as a value of the generated type, and then run against the
// service. A route added without being callable this way fails here: add its call to PROGRAM.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import openapiTS from 'openapi-typescript';
import { startApp } from '../helpers/app.js';

/** Calls every operation through the generated types; `real` is filled with a body the service sent. */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

type Technical = paths['/api/provider-a/technical']['get']['responses'][200]['content']['application/json'];

/** A real response to GET /api/provider-a/technical?symbol=IBM&indicator=MACD, as the service sent it. */
export const real: Technical = REAL_TECHNICAL;

export async function callEveryOperation(baseUrl: string): Promise<Record<string, number>> {
  const client = createClient<paths>({ baseUrl });
  const calls: Record<string, Promise<{ response: Response }>> = {
    getQuote: client.GET('/api/provider-a/quote', { params: { query: { symbol: 'IBM' } } }),
    getTechnical: client.GET('/api/provider-a/technical', { params: { query: { symbol: 'IBM', indicator: 'MACD', interval: 'daily' } } }),
    getDividends: client.GET('/api/provider-b/dividends', { params: { query: { symbol: 'AAPL', limit: 2 } } }),
    getMarketOverview: client.GET('/api/market/overview'),
    getBrokerHealth: client.GET('/api/broker/health'),
    getBrokerAccounts: client.GET('/api/broker/accounts'),
    getBrokerPositions: client.GET('/api/broker/positions'),
    getBrokerQuotes: client.GET('/api/broker/quotes', { params: { query: { symbols: 'AAPL,MSFT' } } }),
    getBrokerStreamTicket: client.GET('/api/broker/stream-ticket'),
    getDailySeries: client.GET('/api/provider-a/daily', { params: { query: { symbol: 'IBM', outputsize: 'compact' } } }),
    searchSymbols: client.GET('/api/provider-a/search', { params: { query: { keywords: 'micro' } } }),
    alphaVantageQuery: client.GET('/api/provider-a/query', { params: { query: { function: 'GLOBAL_QUOTE', symbol: 'IBM' } } }),
    getSystemStatus: client.GET('/api/system/status'),
    getSystemLive: client.GET('/api/system/live'),
    getSystemReady: client.GET('/api/system/ready'),
    getMetrics: client.GET('/metrics', { headers: { authorization: 'Bearer METRICS_TOKEN' }, parseAs: 'text' }),
    mcp: client.POST('/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { accept: 'application/json, text/event-stream' } }),
    stream: client.GET('/api/stream', { params: { query: { status: true } }, parseAs: 'stream' }).then(async (r) => {
      await r.response.body?.cancel();
      return r;
    }),
  };
  const statuses: Record<string, number> = {};
  for (const [operation, call] of Object.entries(calls)) statuses[operation] = (await call).response.status;

  // The typed fields a dashboard reads.
  const quote = await client.GET('/api/provider-a/quote', { params: { query: { symbol: 'MSFT' } } });
  const price: string | undefined = quote.data?.['Global Quote']['05. price'];
  const dividends = await client.GET('/api/provider-b/dividends', { params: { query: { limit: 1 } } });
  const next: string | null | undefined = dividends.data?.next;
  const technical = await client.GET('/api/provider-a/technical', { params: { query: { symbol: 'IBM', indicator: 'RSI' } } });
  const rsi = technical.data?.['Technical Analysis: RSI'];
  const symbol: string | number | undefined = technical.data?.['Meta Data']['1: Symbol'];
  const daily = await client.GET('/api/provider-a/daily', { params: { query: { symbol: 'IBM' } } });
  const days = daily.data?.['Time Series (Daily)'];
  statuses.typedFields = price !== undefined && next !== undefined && rsi !== undefined && symbol === 'IBM' && days !== undefined ? 200 : 0;
  return statuses;
}
`;

test('an openapi-typescript client calling every operation compiles with strict tsc and runs against the service', async (t) => {
  const metricsToken = 'metrics-token-0123456789abcdef';
  const { get, url } = await startApp(t, { env: { ALPHA_VANTAGE_MIN_INTERVAL_MS: '0', METRICS_TOKEN: metricsToken } });
  const doc = (await get('/api/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string }>> };
  const technical = await get('/api/provider-a/technical?symbol=IBM&indicator=MACD');
  assert.equal(technical.status, 200);

  const dir = mkdtempSync(join(tmpdir(), 'mdp-client-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'schema.d.ts'), await openapiTS(doc as never));
  writeFileSync(join(dir, 'client.ts'), PROGRAM.replace('REAL_TECHNICAL', technical.text).replace('METRICS_TOKEN', metricsToken));
  const compilerOptions = {
    strict: true,
    noEmit: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2022', 'dom'],
    types: [],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));

  const tsc = spawnSync(join(process.cwd(), 'node_modules/.bin/tsc'), ['-p', dir], { encoding: 'utf8' });
  assert.equal(tsc.status, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`);

  const program = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
    callEveryOperation(baseUrl: string): Promise<Record<string, number>>;
  };
  const statuses = await program.callEveryOperation(url);
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  const uncalled = operations.filter((id) => !(id in statuses));
  assert.deepEqual(uncalled, [], 'every operation of the document is called by the program');
  for (const [operation, status] of Object.entries(statuses)) assert.equal(status, 200, `${operation} answered ${status}`);
});

test('the generated type rejects a body that breaks the technical schema (the check above can fail)', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body;
  const dir = mkdtempSync(join(tmpdir(), 'mdp-client-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'schema.d.ts'), await openapiTS(doc as never));
  const wrong = `import type { paths } from './schema.js';\nexport const x: paths['/api/provider-a/technical']['get']['responses'][200]['content']['application/json'] = { 'Meta Data': {}, 'Technical Analysis: NOPE': {} };\n`;
  writeFileSync(join(dir, 'wrong.ts'), wrong);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', types: [] },
      files: ['wrong.ts'],
    }),
  );
  const tsc = spawnSync(join(process.cwd(), 'node_modules/.bin/tsc'), ['-p', dir], { encoding: 'utf8' });
  assert.notEqual(tsc.status, 0, 'an unknown section is a type error');
  assert.match(tsc.stdout, /Technical Analysis: NOPE/);
});
