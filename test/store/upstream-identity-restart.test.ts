// The real entry point (src/server.ts) restarted on one STATE_DIR, and on one Redis prefix, between data
// modes and upstream identities: what one identity stored is never served under another, while a restart
// under the same identity still finds its last good values and its budget ledger. The live upstreams are
// standalone simulators (as `npm run sandbox` starts them), failing or refusing when the test needs it.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { SANDBOX_CREDENTIALS, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { startServer } from '../hardening/shutdown/server-process.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';

interface Answer {
  status: number;
  mode: string | undefined;
  cache: string | undefined;
  body: any;
}

async function ask(base: string, path: string): Promise<Answer> {
  const res = await request(base + path);
  const text = await res.body.text();
  return {
    status: res.statusCode,
    mode: res.headers['x-data-mode'] as string | undefined,
    cache: res.headers['x-cache'] as string | undefined,
    body: JSON.parse(text),
  };
}

/** Starts the service, hands it to `use`, and stops it with SIGTERM (a clean exit, as a deployment would). */
async function run(t: TestContext, env: Record<string, string>, use: (url: string) => Promise<void>): Promise<void> {
  const server = await startServer(t, env);
  try {
    await use(server.url);
  } finally {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  }
}

async function usedDay(url: string): Promise<number | undefined> {
  const status = await ask(url, '/api/system/status');
  return (status.body.upstreams as { id: string; budget: { usedDay: number } | null }[]).find((u) => u.id === 'provider-a')?.budget
    ?.usedDay;
}

/** A loopback port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function standaloneSandbox(t: TestContext): Promise<Sandbox> {
  const sandbox = await startSandbox({ alphaVantage: { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 } });
  t.after(() => sandbox.close());
  return sandbox;
}

function liveEnv(sandbox: Sandbox): Record<string, string> {
  return {
    DATA_MODE: 'live',
    ALPHA_VANTAGE_URL: `${sandbox.alphaVantage.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    YAHOO_URL: sandbox.yahoo.origin,
    // Provider A's identity is the subject: without the quote fallback, its failures reach the caller.
    QUOTE_FALLBACK: 'none',
  };
}

/** The honest answer when the upstream cannot be reached and nothing of this identity is stored. */
function assertHonestError(answer: Answer, what: string): void {
  assert.ok(answer.status >= 500, `${what}: status ${answer.status}, ${JSON.stringify(answer.body)}`);
  assert.equal(answer.mode, 'live');
  assert.equal(answer.cache, undefined, `${what}: nothing cached may be served`);
  assert.equal(typeof answer.body.error?.code, 'string');
}

const QUOTE = '/api/provider-a/quote?symbol=MSFT';
const OVERVIEW = '/api/market/overview';

for (const store of ['embedded', 'redis'] as const) {
  const shared = (t: TestContext): Record<string, string> => ({
    ...(store === 'redis' ? { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t), STATE_DIR: tempDir(t) } : { STATE_DIR: tempDir(t) }),
    BROKER: 'none',
    RATE_LIMIT_PER_MINUTE: '0',
    OVERVIEW_SYMBOLS: '^GSPC,BTC-USD',
    ALPHA_VANTAGE_CALLS_PER_DAY: '100',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
  });

  test(`${store}: live never serves what sandbox stored; a sandbox restart still does`, async (t) => {
    const state = shared(t);
    let sandboxQuote: unknown;
    await run(t, { ...state, DATA_MODE: 'sandbox' }, async (url) => {
      const quote = await ask(url, QUOTE);
      assert.equal(quote.status, 200);
      assert.equal(quote.mode, 'sandbox');
      sandboxQuote = quote.body;
      assert.equal((await ask(url, OVERVIEW)).status, 200);
    });

    const upstreams = await standaloneSandbox(t);
    upstreams.alphaVantage.setFaults({ fault: 'http5xx' });
    upstreams.yahoo.setFaults({ fault: 'http5xx' });
    await run(t, { ...state, ...liveEnv(upstreams) }, async (url) => {
      assert.equal(await usedDay(url), 0, 'live starts its own ledger');
      assertHonestError(await ask(url, QUOTE), 'quote');
      assertHonestError(await ask(url, OVERVIEW), 'overview');
      assert.ok(upstreams.alphaVantage.count('/query') >= 1, 'live asked its own upstream');
    });

    await run(t, { ...state, DATA_MODE: 'sandbox' }, async (url) => {
      const quote = await ask(url, QUOTE);
      assert.equal(quote.status, 200);
      assert.ok(quote.cache === 'HIT' || quote.cache === 'STALE', `X-Cache ${quote.cache}: the stored sandbox value`);
      assert.deepEqual(quote.body, sandboxQuote);
      assert.equal(await usedDay(url), 1, 'the sandbox ledger is kept, without the live call');
    });
  });

  test(`${store}: a changed key or URL starts a fresh ledger and never serves the other identity's value`, async (t) => {
    const state = shared(t);
    const upstreams = await standaloneSandbox(t);
    const first = { ...state, ...liveEnv(upstreams) };
    let stored: unknown;
    await run(t, first, async (url) => {
      const quote = await ask(url, QUOTE);
      assert.equal(quote.status, 200);
      assert.equal(quote.cache, 'MISS');
      stored = quote.body;
      assert.equal(await usedDay(url), 1);
    });

    // Another account at the same URL: the simulator refuses its key.
    await run(t, { ...first, ALPHA_VANTAGE_API_KEY: 'another-account-key' }, async (url) => {
      assert.equal(await usedDay(url), 0, 'a new key starts a fresh ledger');
      assertHonestError(await ask(url, QUOTE), 'another key');
    });
    // The same key at another URL, where nothing listens.
    await run(t, { ...first, ALPHA_VANTAGE_URL: `http://127.0.0.1:${await closedPort()}/query` }, async (url) => {
      assert.equal(await usedDay(url), 0, 'a new URL starts a fresh ledger');
      assertHonestError(await ask(url, QUOTE), 'another URL');
    });

    // Back to the first identity, its upstream now failing: its own value and ledger are still there.
    upstreams.alphaVantage.setFaults({ fault: 'http5xx' });
    await run(t, first, async (url) => {
      assert.equal(await usedDay(url), 1);
      const quote = await ask(url, QUOTE);
      assert.equal(quote.status, 200);
      assert.ok(quote.cache === 'HIT' || quote.cache === 'STALE', `X-Cache ${quote.cache}`);
      assert.deepEqual(quote.body, stored);
    });
  });
}
