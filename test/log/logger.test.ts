import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { Pool } from 'undici';
import { createLogger, prettyLines, type RequestLine, RequestLog, redactUrl, SharedFields } from '../../src/log/logger.js';
import { createAlphaVantageSimulator } from '../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import { testConfig } from '../helpers/config.js';
import { duplicateKeys } from '../helpers/log-lines.js';
import { startServer } from '../hardening/shutdown/server-process.js';

const KEY = SANDBOX_CREDENTIALS.alphaVantageKey;

test('every line of a real run, 5xx answers included, is JSON with each key once; SIGTERM loses no request line', async (t) => {
  const sim = createAlphaVantageSimulator({ validKeys: [KEY], callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 });
  await sim.listen();
  t.after(() => sim.close());
  const server = await startServer(t, {
    DATA_MODE: 'live',
    ALPHA_VANTAGE_URL: `${sim.origin}/query`,
    ALPHA_VANTAGE_API_KEY: KEY,
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '0',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    BROKER: 'none',
    OVERVIEW_SOURCE: 'none',
    STATE_DIR: testConfig(t).stateDir,
  });
  const pool = new Pool(server.url, { connections: 8 });
  t.after(() => pool.close());
  const sent = new Map<string, number>();
  const ask = async (path: string, id: string) => {
    const res = await pool.request({ method: 'GET', path, headers: { 'x-request-id': id } });
    await res.body.dump();
    sent.set(id, res.statusCode);
  };

  await ask('/api/provider-a/quote?symbol=IBM', 'miss-1');
  // Cache hits answered by the hot path: many more bytes than one buffer.
  await Promise.all(Array.from({ length: 400 }, (_, i) => ask('/api/provider-a/quote?symbol=IBM', `hit-${i}`)));
  await ask('/api/provider-a/quote', 'bad-request');
  await ask('/api/nowhere', 'not-found');
  sim.setFaults({ fault: 'http5xx' });
  await ask('/api/provider-a/quote?symbol=MSFT', 'upstream-5xx');
  sim.setFaults({ fault: 'malformed' });
  await ask('/api/provider-a/quote?symbol=KO', 'malformed-5xx');
  assert.equal(sent.get('upstream-5xx'), 502);
  assert.equal(sent.get('malformed-5xx'), 502);

  const closed = once(server.child, 'close'); // after stdout has been read to its end
  server.child.kill('SIGTERM');
  await closed;
  assert.equal(await server.exited, 0);

  const requestLines = new Map<string, number>();
  for (const line of server.raw) {
    assert.deepEqual(duplicateKeys(line), [], `a key twice in: ${line}`);
    const entry = JSON.parse(line) as { msg?: unknown; reqId?: string };
    assert.equal(typeof entry.msg, 'string', line);
    if (entry.msg === 'request' && entry.reqId !== undefined) requestLines.set(entry.reqId, (requestLines.get(entry.reqId) ?? 0) + 1);
  }
  for (const id of sent.keys()) assert.equal(requestLines.get(id), 1, `one request line for ${id}`);
  assert.ok(
    server.raw.some((l) => l.includes('"msg":"request failed"')),
    'the 5xx detail line is there too',
  );
  assert.equal(server.raw.filter((l) => l.includes('"msg":"shutting down"')).length, 1, 'each line written once');
});

test('pretty lines are readable and still scrubbed of secrets', async (t) => {
  const config = { ...testConfig(t, { ALPHA_VANTAGE_API_KEY: KEY, LOG_LEVEL: 'info' }), logFormat: 'pretty' as const };
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      out.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger(config, prettyLines(sink));
  logger.warn({ upstream: 'Alpha Vantage', url: `https://example.test/query?apikey=${KEY}` }, `refused key ${KEY}`);
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  const text = out.join('');
  assert.match(text, /WARN/);
  assert.match(text, /refused key \[REDACTED\]/);
  assert.ok(!text.includes(KEY), text);
  assert.throws(() => JSON.parse(text), 'not JSON');
});

test('LOG_FORMAT defaults to pretty on a terminal and is JSON through a pipe', {
  skip: !existsSync('/usr/bin/script') && 'util-linux script(1) is needed for a terminal',
}, async () => {
  // HOST 999.1.1.1 stops the start right after the first log line, whatever the output is.
  const env = { ...process.env, DATA_MODE: 'sandbox', HOST: '999.1.1.1', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: '' };
  delete (env as Record<string, string | undefined>).LOG_FORMAT;
  const run = async (command: string, args: string[]) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    await once(child, 'close');
    return text;
  };
  const entry = `${process.execPath} --import tsx src/server.ts`;
  const piped = await run(process.execPath, ['--import', 'tsx', 'src/server.ts']);
  const firstPiped = piped.split('\n').find((l) => l.includes('broker endpoints ready')) ?? '';
  assert.equal((JSON.parse(firstPiped) as { msg: string }).msg, 'broker endpoints ready');
  const onTerminal = await run('/usr/bin/script', ['-qfec', entry, '/dev/null']);
  const firstTty = onTerminal.split('\n').find((l) => l.includes('broker endpoints ready')) ?? '';
  assert.match(firstTty, /INFO.*broker endpoints ready/, onTerminal);
  assert.ok(!firstTty.trimStart().startsWith('{'), firstTty);
});

test('a key a caller sends in the query string is redacted from the logged URL, wherever it stands', () => {
  assert.equal(
    redactUrl('/api/provider-a/query?function=RSI&apikey=ABC123&symbol=IBM'),
    '/api/provider-a/query?function=RSI&apikey=[REDACTED]&symbol=IBM',
  );
  assert.equal(
    redactUrl('/api/provider-a/query?apikey=ABC123&apiKey=DEF&api_key=G&token=T'),
    '/api/provider-a/query?apikey=[REDACTED]&apiKey=[REDACTED]&api_key=[REDACTED]&token=[REDACTED]',
  );
  // The parser reads a value up to the next `&`: `#frag` is part of it, and redacted with it.
  assert.equal(redactUrl('/api/provider-a/query?APIKEY=abc#frag&x=1'), '/api/provider-a/query?APIKEY=[REDACTED]&x=1');
  // Repeated calls give the same answer (no regex state carried between lines).
  for (let i = 0; i < 3; i += 1) assert.equal(redactUrl('/q?apikey=x'), '/q?apikey=[REDACTED]');
});

test('the query is read as the parser reads it: every spelling of apikey the service would take for one is redacted', () => {
  const KEY = 'CALLERKEY';
  for (const name of [
    'api%6Bey',
    'APIKEY',
    'apiKey',
    '%61pikey',
    '%41%50%49%4B%45%59',
    'api+key',
    'api%20key',
    '+apikey',
    'API-Key',
    'api_key',
    'tok%65n',
    'Ticket',
  ]) {
    const url = `/api/provider-a/query?function=GLOBAL_QUOTE&${name}=${KEY}&symbol=IBM`;
    assert.equal(redactUrl(url), `/api/provider-a/query?function=GLOBAL_QUOTE&${name}=[REDACTED]&symbol=IBM`, name);
  }
  // Repeated, first, and with + and escapes in the value: each value whole, up to the next &.
  assert.equal(redactUrl(`/q?api%6Bey=${KEY}&apikey=${KEY}+2%26&APIKEY=a=b`), '/q?api%6Bey=[REDACTED]&apikey=[REDACTED]&APIKEY=[REDACTED]');
  // Fastify's router starts the query at `#` too; a key hidden in another parameter's value is caught all the same.
  assert.equal(redactUrl(`/q#apikey=${KEY}`), '/q#apikey=[REDACTED]');
  assert.equal(redactUrl(`/q?symbol=IBM?apikey=${KEY}`), '/q?symbol=IBM?apikey=[REDACTED]');
  // Everything else stays as it was sent, escapes included.
  assert.equal(redactUrl(`/q?symbol=%49BM&x=a+b&%61pikey=${KEY}&y=%zz`), '/q?symbol=%49BM&x=a+b&%61pikey=[REDACTED]&y=%zz');
  // A name whose escapes do not decode is not apikey to the parser either.
  assert.equal(redactUrl('/q?api%6Bey%zz=1'), '/q?api%6Bey%zz=1');
});

test('URLs without a caller key are returned as they are', () => {
  for (const url of [
    '/api/provider-a/quote?symbol=IBM',
    '/api/x?notapikey=1',
    '/api/x?myapikey=1',
    '/api&apikey=1',
    '/q?keywords=key%20lime',
    undefined,
  ])
    assert.equal(redactUrl(url), url);
});

/** A string of any of the 256 characters Node's HTTP parser can hand over (it reads bytes as latin1). */
const latin1 = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((code) => String.fromCharCode(code)), maxLength: 160 });
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

test('a request line is, byte for byte, the line pino writes for the same fields (secret scrub included), its shared fields encoded apart (writeShared) or not', (t) => {
  const config = testConfig(t, { ALPHA_VANTAGE_API_KEY: KEY, LOG_LEVEL: 'info' });
  const written: string[] = [];
  const logger = createLogger(config, { write: (line: string) => written.push(line) });
  const requestLog = new RequestLog(logger);
  // What the service wrote before: pino's own path, through a child without the wildcard redact paths.
  const generic = logger.child({}, { redact: [] });
  const sameTime = (line: string) => line.replace(/^(\{"level":30,"time":)\d+,/, '$1T,');
  const requestLine = fc.record({
    reqId: fc.oneof(latin1, fc.constant(KEY)),
    method: maybe(fc.constantFrom('GET', 'HEAD', 'OPTIONS')),
    url: maybe(
      fc.oneof(
        latin1,
        latin1.map((s) => `/api/provider-a/quote?symbol=${s}&x=${KEY}`),
      ),
    ),
    status: fc.integer({ min: 100, max: 599 }),
    ms: fc.oneof(fc.integer({ min: 0, max: 120_000 }), fc.double()),
    cache: maybe(fc.oneof(fc.constantFrom('HIT', 'MISS', 'STALE'), latin1, fc.integer(), fc.array(latin1, { maxLength: 3 }))),
    ip: maybe(latin1),
    tool: maybe(fc.oneof(fc.constantFrom('get_quotes', 'get_quotes,get_indicator'), latin1)),
  }) as fc.Arbitrary<RequestLine>;
  fc.assert(
    fc.property(requestLine, (line) => {
      written.length = 0;
      requestLog.write(line);
      generic.info(line, 'request');
      // A shared line is a hot answer's: it carries no tool.
      requestLog.writeShared(line.reqId, new SharedFields(line), line.ip);
      generic.info({ ...line, tool: undefined }, 'request');
      assert.equal(written.length, 4);
      assert.equal(sameTime(written[0] ?? ''), sameTime(written[1] ?? ''));
      assert.equal(sameTime(written[2] ?? ''), sameTime(written[3] ?? ''), 'writeShared');
      assert.ok(!(written[0] ?? '').includes(KEY));
      JSON.parse(written[0] ?? '');
    }),
    { numRuns: 2_000, seed: 12 },
  );
});

test("request lines reach pino's instrumentation points: its tracing channel, a mixin, a log formatter", (t) => {
  const config = testConfig(t, { LOG_LEVEL: 'info' });
  const line: RequestLine = { reqId: 'r1', method: 'GET', url: '/api/x', status: 200, ms: 1, cache: 'HIT', ip: '127.0.0.1' };
  const written: string[] = [];
  const sink = { write: (text: string) => written.push(text) };

  // An APM agent subscribed to pino's tracing channel sees the line being serialised.
  const seen: unknown[] = [];
  const subscriber = {
    start: (message: unknown) => seen.push(message),
    end: () => {},
    asyncStart: () => {},
    asyncEnd: () => {},
    error: () => {},
  };
  const channel = tracingChannel('pino_asJson');
  channel.subscribe(subscriber);
  try {
    const log = new RequestLog(createLogger(config, sink));
    log.write(line);
    log.writeShared(line.reqId, new SharedFields(line), line.ip);
  } finally {
    channel.unsubscribe(subscriber);
  }
  assert.equal(seen.length, 2, 'write and writeShared');
  assert.equal(JSON.parse(written[0] ?? '').reqId, 'r1');
  assert.equal(JSON.parse(written[1] ?? '').url, '/api/x');

  // A logger created with a mixin (what OpenTelemetry's pino instrumentation adds) or a log formatter.
  written.length = 0;
  const mixed = new RequestLog(pino({ mixin: () => ({ trace_id: 'abc' }) }, sink));
  const formatted = new RequestLog(pino({ formatters: { log: (o) => ({ ...o, formatted: true }) } }, sink));
  for (const log of [mixed, formatted]) {
    log.write(line);
    log.writeShared(line.reqId, new SharedFields(line), line.ip);
  }
  assert.equal(JSON.parse(written[0] ?? '').trace_id, 'abc');
  assert.equal(JSON.parse(written[1] ?? '').trace_id, 'abc');
  assert.equal(JSON.parse(written[2] ?? '').formatted, true);
  assert.equal(JSON.parse(written[3] ?? '').formatted, true);
  assert.equal(JSON.parse(written[3] ?? '').msg, 'request');
});
