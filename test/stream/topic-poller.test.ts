// A topic poller's cadence on mocked time (Date and setTimeout): when each read starts, given how long the
// read takes, what the cache answered and how long the fan-out of its event holds the loop.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type CacheResult, makeEntry } from '../../src/cache/cache-store.js';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { UpstreamCache } from '../../src/cache/upstream-cache.js';
import { ApiError, NotFoundAnswerError } from '../../src/core/errors.js';
import { LiveTopics } from '../../src/stream/live-topics.js';
import { topic } from '../../src/stream/stream-topics.js';
import type { TopicEvent } from '../../src/stream/topic-event.js';
import { MIN_POLL_MS, TopicPoller } from '../../src/stream/topic-poller.js';
import { UpstreamHealth } from '../../src/health/upstream-health.js';

const logger = pino({ level: 'silent' });
const T0 = 1_700_000_000_000;
const WINDOW = { freshMs: 1_000, staleMs: 60_000 };

interface Read {
  /** How long the read takes (mocked time). */
  ms: number;
  answer: () => CacheResult<unknown> | ApiError;
}

/**
 * A poller of one topic whose reads follow `script` (the last entry repeats), and whose fan-out of each
 * event holds the loop for `fanOutMs`: the clock moves on while nothing else can run, as it does
 * while 10,000 sockets are written in one go.
 */
function poller(t: TestContext, script: Read[], fanOutMs: number) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const starts: number[] = [];
  const events: TopicEvent[] = [];
  let reading = 0;
  let overlapped = false;
  const topics = new LiveTopics();
  topics.provide('brokerQuotes', async () => {
    const read = script[Math.min(starts.length, script.length - 1)]!;
    starts.push(Date.now() - T0);
    reading += 1;
    overlapped ||= reading > 1;
    await new Promise((resolve) => setTimeout(resolve, read.ms));
    reading -= 1;
    const answer = read.answer();
    if (answer instanceof ApiError) throw answer;
    return answer;
  });
  const subject = new TopicPoller(
    topic('brokerQuotes', 'AAPL'),
    topics,
    (event) => {
      events.push(event);
      t.mock.timers.setTime(Date.now() + fanOutMs);
    },
    logger,
    () => [],
  );
  t.after(() => subject.stop());
  subject.start();
  return {
    starts,
    events,
    overlapped: () => overlapped,
    run: (ms: number) => runFor(t, ms),
  };
}

/** Runs mocked time forward in 1 ms steps, letting each step's promise continuations run (setImmediate is real). */
async function runFor(t: TestContext, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    t.mock.timers.tick(1);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const fresh = (): CacheResult<unknown> => ({ entry: makeEntry({ at: Date.now() }, WINDOW), status: 'MISS' });
const gaps = (starts: number[]) => starts.slice(1).map((at, i) => at - starts[i]!);

test('a read is due when the fresh window of the value it got ends: a 300 ms fan-out does not move it', async (t) => {
  // Answered 20 ms after the start, fresh for 1 s from the answer, read again 5 ms after that.
  const subject = poller(t, [{ ms: 20, answer: fresh }], 300);
  await subject.run(5_200);
  assert.deepEqual(subject.starts, [0, 1_025, 2_050, 3_075, 4_100, 5_125]);
  assert.equal(subject.events.length, 6);
});

test('no sooner than MIN_POLL_MS after the previous read started, however long its fan-out', async (t) => {
  // A value another request keeps fresh, 100 ms from the end of its window at every read.
  const nearlyStale = (): CacheResult<unknown> => ({
    entry: { ...makeEntry({ at: Date.now() }, WINDOW, Date.now() - 900) },
    status: 'HIT',
  });
  const subject = poller(t, [{ ms: 0, answer: nearlyStale }], 300);
  await subject.run(4_500);
  assert.deepEqual(gaps(subject.starts), [MIN_POLL_MS, MIN_POLL_MS, MIN_POLL_MS, MIN_POLL_MS]);
});

test('after a failure, the next read 5 s after the start of the failed one; one that failed after longer follows at once, never overlapping', async (t) => {
  const refused = () => new ApiError('UPSTREAM_ERROR', 'the upstream answered 503');
  const timedOut = () => new ApiError('UPSTREAM_TIMEOUT', 'the upstream did not answer in time');
  const subject = poller(
    t,
    [
      { ms: 40, answer: refused },
      { ms: 6_000, answer: timedOut },
      { ms: 10, answer: fresh },
    ],
    300,
  );
  await subject.run(12_000);
  // 0: refused after 40 ms, next at 5 000; 5 000: timed out at 11 000, next at once: as soon as the
  // fan-out of its error event (300 ms) lets a timer run, 1 ms later.
  assert.deepEqual(subject.starts.slice(0, 3), [0, 5_000, 11_301]);
  assert.deepEqual(subject.events.map((e) => e.event).slice(0, 3), ['error', 'error', 'brokerQuotes']);
  assert.equal(subject.overlapped(), false);
});

test("an upstream's Retry-After counts from its answer", async (t) => {
  const budget = () => new ApiError('QUOTA_EXHAUSTED', 'the minute budget is spent', { retryAfterSeconds: 8 });
  const subject = poller(t, [{ ms: 500, answer: budget }], 300);
  await subject.run(9_000);
  assert.deepEqual(subject.starts, [0, 8_500]);
});

test('a "not found" the cache remembers: one read, then none until the cache forgets it, then one more', async (t) => {
  // The cache remembers it for a minute here (an hour by default): the topic rests that long, not 5 s.
  const remembered = () => new NotFoundAnswerError('no quote for this symbol', { until: Date.now() + 60_000, cache: 'MISS' });
  const subject = poller(t, [{ ms: 20, answer: remembered }], 300);
  await subject.run(30_000);
  assert.deepEqual(subject.starts, [0]);
  await subject.run(31_000);
  // Told at 20 ms, remembered for 60 s: read again just after.
  assert.deepEqual(subject.starts, [0, 60_025]);
  assert.deepEqual(
    subject.events.map((e) => [e.event, JSON.parse(e.data).error.code]),
    [
      ['error', 'SYMBOL_NOT_FOUND'],
      ['error', 'SYMBOL_NOT_FOUND'],
    ],
  );
});

test('after a failed refresh, the next read comes when the cache lets a refresh try again: each one reaches the upstream', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const cache = new UpstreamCache({
    memory: new MemoryCacheStore({ maxEntries: 10, maxBytes: 100_000 }),
    logger,
    health: new UpstreamHealth(),
  });
  const calls: number[] = [];
  let failing = false;
  const upstream = async () => {
    calls.push(Date.now() - T0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    if (failing) throw new ApiError('UPSTREAM_ERROR', 'the upstream answered 503');
    return { at: Date.now() };
  };
  const topics = new LiveTopics();
  topics.provide('brokerQuotes', (_arg, { revalidate }) =>
    cache.fetch('quotes:AAPL', WINDOW, upstream, { upstream: 'ibkr', breaker: false, revalidate }),
  );
  const events: TopicEvent[] = [];
  const fanOut = (event: TopicEvent) => {
    events.push(event);
    t.mock.timers.setTime(Date.now() + 300);
  };
  const subject = new TopicPoller(topic('brokerQuotes', 'AAPL'), topics, fanOut, logger, () => []);
  t.after(() => subject.stop());
  subject.start();
  await runFor(t, 1_000);
  failing = true;
  await runFor(t, 5_000);
  t.diagnostic(`upstream calls at ${calls.join(', ')} ms`);
  // Every read reached the upstream, one window after the last failure: none came while the cache
  // held the failed key back (that read would cost a whole window), none waited for the fan-out.
  assert.deepEqual(gaps(calls), [1_035, 1_030, 1_030, 1_030, 1_030]);
  assert.equal(events.length, 6);
});
