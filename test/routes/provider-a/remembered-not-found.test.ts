// A provider's "no data for this symbol" is remembered (CACHE_NOT_FOUND_SECONDS, an hour): asked again, the
// same 404 comes back with no provider call, from every replica and across a restart, until the window ends.
// Calls are counted at the simulators; each test fails on a service that asks the provider every time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RunningApp, startApp, type TestResponse } from '../../helpers/app.js';
import { NO_FALLBACK, tempDir, UNCAPPED } from '../../helpers/config.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';
import { SseClient } from '../../stream/sse-client.js';

/** No instrument of the sandbox, nor of Yahoo's simulator. */
const NOPE = 'NOPEX1';
const QUOTE = `/api/provider-a/quote?symbol=${NOPE}`;
const DAILY = `/api/provider-a/daily?symbol=${NOPE}`;
const OVERVIEW = `/api/provider-a/query?function=OVERVIEW&symbol=${NOPE}`;
const HOUR_MS = 3_600_000;

interface Asked {
  answers: TestResponse[];
  /** Provider calls each answer cost: Alpha Vantage's, then Yahoo's. */
  calls: [number, number][];
}

function providerCalls(running: RunningApp): [number, number] {
  return [running.sandbox.alphaVantage.count(), running.sandbox.yahoo.count()];
}

async function ask(running: RunningApp, path: string, times: number): Promise<Asked> {
  const asked: Asked = { answers: [], calls: [] };
  for (let i = 0; i < times; i += 1) {
    const [av, yahoo] = providerCalls(running);
    asked.answers.push(await running.get(path));
    const [avAfter, yahooAfter] = providerCalls(running);
    asked.calls.push([avAfter - av, yahooAfter - yahoo]);
  }
  return asked;
}

/** The calls of `times` answers when only the first reaches the providers, with `first` (Alpha Vantage's, Yahoo's). */
function firstOnly(times: number, first: [number, number] = [1, 0]): [number, number][] {
  return [first, ...Array.from({ length: times - 1 }, (): [number, number] => [0, 0])];
}

/** Every answer the same 404, the first from the provider (MISS), the others from the cache's memory (HIT). */
function assertSameNotFound({ answers }: Asked, path: string): void {
  const [first] = answers;
  for (const answer of answers) {
    assert.equal(answer.status, 404, `${path}: ${answer.text}`);
    assert.equal(answer.body.error.code, 'SYMBOL_NOT_FOUND', path);
    assert.equal(answer.body.error.message, first?.body.error.message, path);
    assert.equal(answer.headers['cache-control'], 'no-store', path);
  }
  assert.deepEqual(
    answers.map((a) => a.headers['x-cache']),
    ['MISS', ...answers.slice(1).map(() => 'HIT')],
    path,
  );
}

test('without the fallback: /quote, /daily and OVERVIEW of an unknown symbol, each asked 4 times, cost one Alpha Vantage call each', async (t) => {
  const running = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK } });
  for (const path of [QUOTE, DAILY, OVERVIEW]) {
    const asked = await ask(running, path, 4);
    assertSameNotFound(asked, path);
    assert.deepEqual(asked.calls, firstOnly(4), path);
  }
  // Seen where the cache's figures are: 3 paths × 3 remembered answers.
  const status = await running.get('/api/system/status');
  assert.equal(status.body.cache.lookups.notFound, 9);
  assert.match((await running.scrape()).text, /^mdp_cache_lookups_total\{outcome="not_found"\} 9$/m);
});

test('with the Yahoo fallback (the default): an unknown quote costs one Yahoo and one Alpha Vantage call, then none', async (t) => {
  const running = await startApp(t);
  // IBM takes provider A's one hot place, so the unknown symbol is asked of Yahoo first, then of provider A.
  for (let i = 0; i < 5; i += 1) assert.equal((await running.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  const quote = await ask(running, QUOTE, 4);
  assertSameNotFound(quote, QUOTE);
  assert.deepEqual(quote.calls, firstOnly(4, [1, 1]));
  for (const path of [DAILY, OVERVIEW]) {
    const asked = await ask(running, path, 4);
    assertSameNotFound(asked, path);
    assert.deepEqual(asked.calls, firstOnly(4), path);
  }
});

test('two instances on one Redis: the second answers the "not found" the first was told, with no call, on a GET and a stream', async (t) => {
  const env = { ...UNCAPPED, REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) };
  const first = await startApp(t, { env });
  const second = await startApp(t, { env });
  for (const path of [QUOTE, OVERVIEW]) assert.equal((await first.get(path)).status, 404);
  assert.ok(first.sandbox.alphaVantage.count() >= 2);

  for (const path of [QUOTE, OVERVIEW]) {
    const asked = await ask(second, path, 2);
    for (const answer of asked.answers) {
      assert.equal(answer.status, 404, answer.text);
      assert.equal(answer.headers['x-cache'], 'HIT', path);
    }
    assert.deepEqual(
      asked.calls,
      [
        [0, 0],
        [0, 0],
      ],
      path,
    );
  }
  // A new viewer of the topic on the second instance hears it at once, from the shared memory.
  const stream = await SseClient.open(t, `${second.url}/api/stream?quote=${NOPE}`);
  await stream.until((s) => s.of('error').length === 1, 'the error event');
  const event = JSON.parse(stream.of('error')[0]!.data);
  assert.equal(event.error.code, 'SYMBOL_NOT_FOUND');
  assert.equal(event.topic, `quote=${NOPE}`);
  assert.deepEqual(providerCalls(second), [0, 0]);
});

test('the embedded store: a "not found" is still remembered after a restart on the same STATE_DIR', async (t) => {
  const env = { ...UNCAPPED, STATE_DIR: tempDir(t) };
  const before = await startApp(t, { env });
  const told = await before.get(OVERVIEW);
  assert.equal(told.status, 404);
  await before.app.close();

  const after = await startApp(t, { env });
  const asked = await ask(after, OVERVIEW, 2);
  assert.deepEqual(
    asked.answers.map((a) => [a.status, a.headers['x-cache'], a.body.error.message]),
    [
      [404, 'HIT', told.body.error.message],
      [404, 'HIT', told.body.error.message],
    ],
  );
  assert.deepEqual(asked.calls, [
    [0, 0],
    [0, 0],
  ]);
});

test('after CACHE_NOT_FOUND_SECONDS the provider is asked again, once', async (t) => {
  const running = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK } });
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  assert.deepEqual((await ask(running, OVERVIEW, 2)).calls, firstOnly(2));
  t.mock.timers.tick(HOUR_MS - 1_000);
  assert.deepEqual((await ask(running, OVERVIEW, 1)).calls, [[0, 0]], 'still remembered a second before the hour');
  t.mock.timers.tick(2_000);
  const again = await ask(running, OVERVIEW, 2);
  assertSameNotFound(again, OVERVIEW);
  assert.deepEqual(again.calls, firstOnly(2), 'asked again once the hour is over, then remembered again');
});

test('a limit body is never remembered: once the back-off is over, the next request calls Alpha Vantage again', async (t) => {
  // The key allows one call a minute; the service believes it has many, so the second call meets the limit.
  const running = await startApp(t, {
    env: { ...UNCAPPED, ...NO_FALLBACK },
    sandbox: { alphaVantage: { callsPerMinute: 1, callsPerDay: 0, burstPerSecond: 0 }, now: () => Date.now() },
  });
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  assert.equal((await running.get('/api/provider-a/query?function=OVERVIEW&symbol=IBM')).status, 200);
  const limited = await ask(running, OVERVIEW, 2);
  assert.deepEqual(
    limited.answers.map((a) => [a.status, a.body.error.code]),
    [
      [429, 'QUOTA_EXHAUSTED'],
      [429, 'QUOTA_EXHAUSTED'],
    ],
  );
  assert.deepEqual(limited.calls, firstOnly(2), 'the limit body, then the back-off: no call');
  const retryAfter = Number(limited.answers[0]?.headers['retry-after']);
  assert.ok(retryAfter >= 60, String(retryAfter));

  t.mock.timers.tick(retryAfter * 1000 + 1_000);
  const after = await ask(running, OVERVIEW, 2);
  assertSameNotFound(after, OVERVIEW);
  assert.deepEqual(after.calls, firstOnly(2), 'the provider asked again, its "not found" remembered from then on');
});

test('a stream of 10 unknown symbols: one error event per topic, then no read and no provider call for 30 s', async (t) => {
  // Alpha Vantage alone, uncapped: each topic's first read reaches it at once.
  const running = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK } });
  // Every read a topic's poller starts, counted as it starts (the pollers read through this one object).
  const topics = running.app.liveTopics;
  const load = topics.load.bind(topics);
  let reads = 0;
  topics.load = (topic, revalidate) => {
    reads += 1;
    return load(topic, revalidate);
  };
  // The service's timers and clock are the test's from here: the pollers' next reads are set on them.
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
  const symbols = Array.from({ length: 10 }, (_, i) => `NOPEX${i}`);
  const stream = await SseClient.open(t, `${running.url}/api/stream?quote=${symbols.join(',')}`);
  await stream.until((s) => s.of('error').length === 10, 'ten error events');
  assert.deepEqual(
    stream
      .of('error')
      .map((e) => JSON.parse(e.data).topic as string)
      .sort(),
    symbols.map((s) => `quote=${s}`).sort(),
  );
  assert.deepEqual([reads, running.sandbox.alphaVantage.count()], [10, 10]);

  for (let second = 0; second < 30; second += 1) {
    t.mock.timers.tick(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.mock.timers.reset();
  assert.equal(reads, 10, 'no topic was read again (each would have been every 5 s)');
  assert.equal(running.sandbox.alphaVantage.count(), 10);
  assert.equal(stream.of('error').length, 10, 'one error event per topic');
  assert.equal(stream.ended, false);
});
