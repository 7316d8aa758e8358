// The hub's fan-out on stand-in responses: a chunk of viewers per event-loop turn, a newer frame
// superseding the one being written, a viewer never given an older frame after a newer one, a new viewer
// given the latest at once, blocked viewers holding the latest only, the heartbeat spread over turns;
// and with a poller, a fan-out longer than the poll interval neither delays the poll nor falls behind.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type CacheResult, makeEntry } from '../../src/cache/cache-store.js';
import { LiveTopics } from '../../src/stream/live-topics.js';
import { StreamClient } from '../../src/stream/stream-client.js';
import { type FeedFactory, StreamHub } from '../../src/stream/stream-hub.js';
import { topic } from '../../src/stream/stream-topics.js';
import type { TopicEvent } from '../../src/stream/topic-event.js';
import { TopicPoller } from '../../src/stream/topic-poller.js';
import { addressCaller } from '../../src/core/caller.js';

const STATUS = topic('status');

/** What a stream's socket was given: the id of each frame, ':' for a heartbeat. */
class FakeResponse extends EventEmitter {
  readonly written: string[] = [];
  writableLength = 0;
  destroyed = false;
  /** false: the socket stops draining (write answers false). */
  draining = true;

  constructor(private readonly onWrite: () => void = () => {}) {
    super();
  }

  write(chunk: Buffer | string): boolean {
    const text = String(chunk);
    this.written.push(text.startsWith(':') ? ':' : (/^id: (\S+)/m.exec(text)?.[1] ?? text));
    this.onWrite();
    this.emit('written');
    return this.draining;
  }

  end(): void {}

  destroy(): void {
    this.destroyed = true;
  }

  /** The ids of the frames written, heartbeats left out. */
  get frames(): string[] {
    return this.written.filter((w) => w !== ':');
  }
}

function viewer(onWrite?: () => void): { client: StreamClient; res: FakeResponse } {
  const res = new FakeResponse(onWrite);
  const client = new StreamClient(res as unknown as ServerResponse, {
    caller: addressCaller('127.0.0.1'),
    slowClientMs: 2_000,
    retryMs: 3_000,
  });
  return { client, res };
}

/** A hub whose feeds do nothing: the test delivers the events. */
function hub(t: TestContext, chunk: number, heartbeatMs = 60_000): StreamHub {
  const subject = new StreamHub({ feeds: () => ({ stop: () => {} }), heartbeatMs, maxConnections: 100_000, maxPerClient: 0, chunk });
  t.after(() => subject.close());
  return subject;
}

const event = (id: string): TopicEvent => ({ topic: STATUS.id, id, event: 'status', data: `{"n":"${id}"}`, fingerprint: id });

/** Resolves once `done()` holds, checked after every write to any of `responses`. */
function untilWritten(responses: FakeResponse[], done: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), 10_000);
    const check = () => {
      if (done()) finish();
    };
    const finish = (error?: Error) => {
      clearTimeout(timer);
      for (const res of responses) res.off('written', check);
      if (error === undefined) resolve();
      else reject(error);
    };
    for (const res of responses) res.on('written', check);
    check();
  });
}

test('a fan-out writes a chunk of viewers per turn; a newer frame reaches those not written yet instead of the older one, and the others after it', async (t) => {
  const subject = hub(t, 4);
  const viewers = Array.from({ length: 10 }, () => viewer());
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  const frames = () => viewers.map(({ res }) => res.frames);

  subject.deliver(event('A'));
  assert.deepEqual(frames(), [['A'], ['A'], ['A'], ['A'], [], [], [], [], [], []], 'the first chunk at once, the others in later turns');
  subject.deliver(event('B'));
  assert.deepEqual(frames().slice(4), [[], [], [], [], [], []], 'the fan-out in progress carries on with B');
  await untilWritten(
    viewers.map((v) => v.res),
    () => frames().every((f) => f.at(-1) === 'B'),
    'B at every viewer',
  );
  assert.deepEqual(frames(), [['A', 'B'], ['A', 'B'], ['A', 'B'], ['A', 'B'], ['B'], ['B'], ['B'], ['B'], ['B'], ['B']]);
});

test('each pass over the viewers is timed from its first write to its last, a superseded one and the pass that follows it alike', async (t) => {
  // The clock moves one millisecond a write: a pass's time is its writes.
  let clock = 0;
  const passes: [number, number][] = [];
  const subject = new StreamHub({
    feeds: () => ({ stop: () => {} }),
    heartbeatMs: 60_000,
    maxConnections: 100,
    maxPerClient: 0,
    chunk: 4,
    now: () => clock,
    onPass: (ms, viewers) => passes.push([ms, viewers]),
  });
  t.after(() => subject.close());
  const viewers = Array.from({ length: 10 }, () => viewer(() => (clock += 1)));
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  const frames = () => viewers.map(({ res }) => res.frames);

  subject.deliver(event('A'));
  assert.deepEqual(passes, [], 'a pass is reported once it ends');
  await untilWritten(
    viewers.map((v) => v.res),
    () => frames().every((f) => f.length === 1),
    'A at every viewer',
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(passes, [[10, 10]]);

  // B comes after the first chunk: the pass goes on with B (6 writes), and a second gives the first 4 theirs.
  subject.deliver(event('B'));
  subject.deliver(event('C'));
  await untilWritten(
    viewers.map((v) => v.res),
    () => frames().every((f) => f.at(-1) === 'C'),
    'C at every viewer',
  );
  // The second pass still visits the viewers already given C (a chunk a turn) before it ends.
  for (let turn = 0; passes.length < 3 && turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(frames(), [...Array(4).fill(['A', 'B', 'C']), ...Array(6).fill(['A', 'C'])]);
  assert.deepEqual(passes.slice(1), [
    [10, 10],
    [4, 10],
  ]);
});

test('a viewer arriving during a fan-out gets the latest frame at once, and only once', async (t) => {
  const subject = hub(t, 4);
  const viewers = Array.from({ length: 10 }, () => viewer());
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  subject.deliver(event('A'));
  const late = viewer();
  subject.attach(late.client, [STATUS]);
  assert.deepEqual(late.res.frames, ['A']);
  await untilWritten(
    viewers.map((v) => v.res),
    () => viewers.every(({ res }) => res.frames.length === 1),
    'A at every viewer',
  );
  subject.deliver(event('B'));
  await untilWritten([late.res], () => late.res.frames.length === 2, 'B at the late viewer');
  assert.deepEqual(late.res.frames, ['A', 'B']);
});

test('frames delivered faster than a fan-out ends: every viewer gets them in order, never an older after a newer, and ends with the last', async (t) => {
  const subject = hub(t, 3);
  const viewers = Array.from({ length: 50 }, () => viewer());
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  for (let n = 1; n <= 30; n += 1) {
    subject.deliver(event(String(n)));
    // Sometimes several frames in one turn, sometimes a few turns between them.
    for (let turn = 0; turn < n % 4; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  }
  await untilWritten(
    viewers.map((v) => v.res),
    () => viewers.every(({ res }) => res.frames.at(-1) === '30'),
    'the last frame everywhere',
  );
  for (const { res } of viewers) {
    const numbers = res.frames.map(Number);
    assert.ok(
      numbers.every((n, i) => i === 0 || n > numbers[i - 1]!),
      `in order, no repeat: ${numbers.join(',')}`,
    );
  }
  const writes = viewers.reduce((sum, { res }) => sum + res.frames.length, 0);
  t.diagnostic(`30 frames to 50 viewers, 3 a turn: ${writes} writes`);
  assert.ok(writes < 30 * 50, 'frames superseded before they were written were not written');
});

test('a blocked viewer holds the latest frame only, and gets it once its socket drains; the others are not held back', async (t) => {
  const subject = hub(t, 4);
  const stuck = viewer();
  const reader = viewer();
  subject.attach(stuck.client, [STATUS]);
  subject.attach(reader.client, [STATUS]);
  stuck.res.draining = false;
  for (const id of ['A', 'B', 'C']) subject.deliver(event(id));
  assert.deepEqual(stuck.res.frames, ['A']);
  assert.deepEqual(reader.res.frames, ['A', 'B', 'C']);
  assert.equal(stuck.client.dropped, 1, 'B was replaced by C before it could be written');
  stuck.res.draining = true;
  stuck.res.emit('drain');
  assert.deepEqual(stuck.res.frames, ['A', 'C']);
});

test('the heartbeat reaches every stream, a chunk per turn, and closes a stream blocked too long', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_700_000_000_000 });
  const subject = hub(t, 4, 1_000);
  const viewers = Array.from({ length: 10 }, () => viewer());
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  const stuck = viewers[7]!;
  stuck.res.draining = false;
  subject.deliver(event('A'));
  await untilWritten(
    viewers.map((v) => v.res),
    () => viewers.every(({ res }) => res.frames.length === 1),
    'A at every viewer',
  );
  assert.equal(stuck.client.blocked, true);

  const beats = (n: number) => viewers.every(({ res }) => res === stuck.res || res.written.filter((w) => w === ':').length === n);
  t.mock.timers.tick(1_000);
  assert.equal(viewers.filter(({ res }) => res.written.includes(':')).length, 4, 'the first chunk at once');
  await untilWritten(
    viewers.map((v) => v.res),
    () => beats(1),
    'a heartbeat everywhere',
  );
  t.mock.timers.tick(1_000);
  await untilWritten(
    viewers.map((v) => v.res),
    () => beats(2),
    'a second heartbeat',
  );
  assert.equal(stuck.res.destroyed, false, 'blocked for 2 s, not more than slowClientMs');
  t.mock.timers.tick(1_000);
  await untilWritten(
    viewers.map((v) => v.res),
    () => beats(3),
    'a third heartbeat',
  );
  assert.equal(stuck.res.destroyed, true, 'blocked for 3 s: closed');
});

test('a heartbeat pass gives way to a fan-out: the event reaches every viewer first, the comments follow', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_700_000_000_000 });
  const subject = hub(t, 8, 1_000);
  const viewers = Array.from({ length: 40 }, () => viewer());
  for (const { client } of viewers) subject.attach(client, [STATUS]);
  const beaten = () => viewers.filter(({ res }) => res.written.includes(':')).length;
  t.mock.timers.tick(1_000);
  subject.deliver(event('A'));
  assert.deepEqual([beaten(), viewers.filter(({ res }) => res.frames.length === 1).length], [8, 8], 'a chunk of each at once');
  await untilWritten(
    viewers.map((v) => v.res),
    () => viewers.every(({ res }) => res.frames.length === 1),
    'A at every viewer',
  );
  // 32 viewers left for A at 7 a turn: 5 turns, in which the pass got 1 a turn and what A left of the last.
  assert.equal(beaten(), 8 + 4 + 4);
  await untilWritten(
    viewers.map((v) => v.res),
    () => beaten() === 40,
    'a heartbeat everywhere',
  );
});

test('a fan-out longer than the poll interval: the poll keeps its time, and the viewers it has not reached get the newest frame', async (t) => {
  const T0 = 1_700_000_000_000;
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: T0 });
  const reads: number[] = [];
  const topics = new LiveTopics();
  // A value that changes at every read, answered at once and fresh for 1 s.
  topics.provide('brokerQuotes', async (): Promise<CacheResult<unknown>> => {
    reads.push(Date.now() - T0);
    return { entry: makeEntry({ at: Date.now() }, { freshMs: 1_000, staleMs: 60_000 }), status: 'MISS' };
  });
  const logger = pino({ level: 'silent' });
  const pollers: TopicPoller[] = [];
  const feeds: FeedFactory = (feedTopic, deliver, holders) => {
    const poller = new TopicPoller(feedTopic, topics, deliver, logger, holders);
    pollers.push(poller);
    poller.start();
    return poller;
  };
  const subject = new StreamHub({ feeds, heartbeatMs: 60_000, maxConnections: 100_000, maxPerClient: 0, chunk: 256 });
  t.after(() => subject.close());
  // Each write holds the loop for 1 ms: 3,000 viewers take 3 s, three poll intervals.
  const viewers = Array.from({ length: 3_000 }, () => viewer(() => t.mock.timers.setTime(Date.now() + 1)));
  const quotes = topic('brokerQuotes', 'AAPL');
  for (const { client } of viewers) subject.attach(client, [quotes]);

  // The event loop: due timers, then one turn of immediates (the fan-out's next chunk).
  while (Date.now() - T0 < 8_000) {
    t.mock.timers.tick(0);
    await new Promise((resolve) => setImmediate(resolve));
  }
  pollers[0]!.stop();
  const sequence = (id: string) => Number(id.split('-')[1]);
  const produced = Math.max(...viewers.flatMap(({ res }) => res.frames.map(sequence)));
  await untilWritten(
    viewers.map((v) => v.res),
    () => viewers.every(({ res }) => sequence(res.frames.at(-1)!) === produced),
    'the last frame everywhere',
  );

  t.diagnostic(`reads at ${reads.join(', ')} ms`);
  const gaps = reads.slice(1).map((at, i) => at - reads[i]!);
  // Due 1,005 ms after the last (its 1 s window, +5 ms), late by at most the chunk in progress then.
  for (const gap of gaps) assert.ok(gap >= 1_005 && gap <= 1_005 + 256, `a read every window, whatever the fan-out: ${gaps.join(', ')}`);
  assert.ok(reads.length >= 7, `${reads.length} reads in 8 s`);
  const firstFrames = new Set(viewers.map(({ res }) => res.frames[0]));
  assert.ok(firstFrames.size >= 2, 'viewers not reached before the next frame got that one first: the older one was skipped');
  for (const { res } of viewers) {
    const numbers = res.frames.map(sequence);
    assert.ok(
      numbers.every((n, i) => i === 0 || n > numbers[i - 1]!),
      `in order, no repeat: ${numbers.join(',')}`,
    );
  }
});
