import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { buildApp } from '../../../src/app.js';
import { createLogger } from '../../../src/log/logger.js';
import { SANDBOX_CREDENTIALS, sandboxConfig } from '../../../src/sandbox/index.js';
import { httpGet, startSandboxOnly } from '../../helpers/app.js';
import { testConfig } from '../../helpers/config.js';
import { duplicateKeys } from '../../helpers/log-lines.js';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  url?: string;
  status?: number;
  ms?: number;
  [key: string]: unknown;
}

/** Starts the service with the production logger writing into memory. */
async function startLogged(t: TestContext, level = 'info') {
  const sandbox = await startSandboxOnly(t);
  const config = sandboxConfig(testConfig(t, { LOG_LEVEL: level }), sandbox);
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const app = await buildApp(config, { logger: createLogger(config, sink) });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  return {
    app,
    raw,
    lines: () => raw.map((l) => JSON.parse(l) as LogLine),
    get: (path: string, headers: Record<string, string> = {}) => httpGet(base + path, headers),
  };
}

test('one log line per request, carrying the request id echoed as X-Request-Id', async (t) => {
  const service = await startLogged(t);
  const given = await service.get('/api/system/live', { 'x-request-id': 'trace-abc.123' });
  assert.equal(given.headers['x-request-id'], 'trace-abc.123');
  const generated = await service.get('/api/provider-a/quote');
  const generatedId = String(generated.headers['x-request-id']);
  assert.match(generatedId, /^[0-9a-f-]{36}$/);
  assert.equal(generated.body.error.requestId, generatedId, 'the error body names the same id');
  // An unsafe id is replaced, never echoed.
  const unsafe = await service.get('/api/system/live', { 'x-request-id': 'bad id\twith spaces' });
  assert.notEqual(unsafe.headers['x-request-id'], 'bad id\twith spaces');

  const requests = service.lines().filter((l) => l.msg === 'request');
  assert.equal(requests.length, 3);
  for (const [line, id, status] of [
    [requests[0], 'trace-abc.123', 200],
    [requests[1], generatedId, 400],
    [requests[2], String(unsafe.headers['x-request-id']), 200],
  ] as const) {
    assert.equal(line?.reqId, id);
    assert.equal(line?.status, status);
    assert.equal(typeof line?.ms, 'number');
  }
  assert.equal(service.lines().filter((l) => l.reqId === 'trace-abc.123').length, 1, 'exactly one line for that request');
});

test('upstream calls are logged with duration and outcome, and never with the key', async (t) => {
  const service = await startLogged(t, 'debug');
  assert.equal((await service.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  const upstream = service.lines().filter((l) => l.upstream !== undefined && typeof l.ms === 'number');
  assert.ok(upstream.length >= 1, 'an upstream call line');
  assert.ok(upstream.every((l) => typeof l.status === 'number' || typeof l.failure === 'string'));
  for (const line of service.raw) assert.ok(!line.includes(SANDBOX_CREDENTIALS.alphaVantageKey), `key in log: ${line}`);
});

test("every spelling of apikey the query parser reads is redacted from the request log line, the pipeline's and the hot path's", async (t) => {
  const service = await startLogged(t);
  const KEY = 'CALLERKEY7f3a9';
  const spellings = ['api%6Bey', '%61pikey', 'APIKEY', 'apiKey', 'api+key', 'apikey=x&apikey'];
  for (const name of spellings) {
    const path = `/api/provider-a/query?function=GLOBAL_QUOTE&symbol=IBM&${name}=${KEY}&datatype=json`;
    // Twice: a repeat the pipeline answered with 200 is the hot path's, which writes its own line.
    for (let i = 0; i < 2; i += 1) await service.get(path);
    const lines = service.raw.filter((line) => line.includes('GLOBAL_QUOTE'));
    for (const line of lines) {
      assert.ok(!line.includes(KEY), `the caller's key is logged: ${line}`);
      assert.deepEqual(duplicateKeys(line), []);
    }
  }
  assert.ok(service.app.hotPath.served >= 2, `the hot path wrote some of the lines (${service.app.hotPath.served})`);
  const logged = service.lines().filter((l) => l.msg === 'request' && l.url?.includes('GLOBAL_QUOTE'));
  assert.equal(logged.length, spellings.length * 2);
  // The rest of the URL is logged as it was sent.
  assert.equal(logged[0]?.url, '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=IBM&api%6Bey=[REDACTED]&datatype=json');
});
