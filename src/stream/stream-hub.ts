// Fans topic events out to the streams of this process. A topic's feed (a poller, or with Redis the
// replica-wide relay) starts with its first viewer and stops with its last; each event is framed once
// and written to every viewer; a new viewer gets the topic's latest event at once.
//
// Writing to 10,000 sockets takes about 100 ms: done in one go it would hold the event loop, and with
// it the poll timers, the upstream answers and every other request. So a fan-out writes a chunk of
// viewers per event-loop turn, and a newer frame supersedes the one being written: viewers not reached
// yet get only the newest, those already given the older one get the newest after it (never an older
// frame after a newer one).
import type { Caller } from '../core/caller.js';
import { ApiError } from '../core/errors.js';
import { Frame, type StreamClient } from './stream-client.js';
import type { Topic } from './stream-topics.js';
import { frameOf, type TopicEvent } from './topic-event.js';

export interface TopicFeed {
  stop(): void;
}

/**
 * Starts whatever produces a topic's events; `deliver` is called with each one. `holders`: the callers whose
 * streams hold the topic now, to whose accounts its upstream calls are put.
 */
export type FeedFactory = (topic: Topic, deliver: (event: TopicEvent) => void, holders: () => readonly Caller[]) => TopicFeed;

export interface StreamHubOptions {
  feeds: FeedFactory;
  heartbeatMs: number;
  maxConnections: number;
  /** Per caller (a client key, or an address: src/core/caller.ts); 0 = no limit. */
  maxPerClient: number;
  /** Viewers written per event-loop turn, all fan-outs and the heartbeat together. */
  chunk?: number;
  /**
   * Told of each pass over a topic's viewers (the newest event written to each that lacks it): how long it took,
   * in ms, and over how many viewers. A viewer waits up to a pass for an event, so a pass slower than the topic's
   * events is a server with more viewers than it can write to (bench/fan-out-floor.ts: about 100 ms for 10,000
   * loopback sockets on two vCPUs).
   */
  onPass?: (ms: number, viewers: number) => void;
  /** The clock passes are timed by, in ms (tests give their own). */
  now?: () => number;
}

/**
 * A few milliseconds of writes (a write costs about 9 µs at 10,000 streams, bench/stream.ts): between
 * chunks the loop serves timers, upstream answers and requests.
 */
const FAN_OUT_CHUNK = 256;

/** Work spread over event-loop turns. */
interface Job {
  readonly finished: boolean;
  /** Visits at most `budget` streams; returns how many it visited (fewer only once finished). */
  run(budget: number): number;
}

interface Viewer {
  readonly client: StreamClient;
  /** The generation of the topic's frame this viewer was last given. */
  generation: number;
}

/** How a topic's passes are timed and reported (StreamHubOptions). */
interface PassTiming {
  now(): number;
  onPass(ms: number, viewers: number): void;
}

class TopicState implements Job {
  readonly viewers = new Map<StreamClient, Viewer>();
  /** The callers holding this topic: their streams' callers, each once. */
  readonly holders = (): readonly Caller[] => [...new Set([...this.viewers.keys()].map((client) => client.caller))];
  feed: TopicFeed = { stop: () => {} };
  last: { fingerprint: string; frame: Frame } | undefined;
  /** Counts frames: a viewer whose generation differs has not been given the latest. */
  generation = 0;
  finished = true;
  /** The pass over the viewers in progress, and the generation when it began. */
  private pass: MapIterator<Viewer> | undefined;
  private passFrom = 0;
  private passStartedAt = 0;

  constructor(
    readonly id: string,
    private readonly timing: PassTiming | undefined,
  ) {}

  push(fingerprint: string, frame: Frame): void {
    this.last = { fingerprint, frame };
    this.generation += 1;
    this.finished = false;
  }

  run(budget: number): number {
    const frame = this.last?.frame;
    const generation = this.generation;
    let visited = 0;
    while (frame !== undefined) {
      if (this.pass === undefined) {
        this.pass = this.viewers.values();
        this.passFrom = generation;
        if (this.timing !== undefined) this.passStartedAt = this.timing.now();
      }
      // A Map iterator sees viewers added after it began (they were given the latest on attach, so are
      // skipped here) and skips those removed; it resumes where the last chunk left it.
      for (const viewer of this.pass) {
        if (viewer.generation !== generation) {
          viewer.generation = generation;
          viewer.client.send(this.id, frame);
        }
        visited += 1;
        if (visited === budget) return visited;
      }
      this.pass = undefined;
      this.timing?.onPass(this.timing.now() - this.passStartedAt, this.viewers.size);
      // A newer frame came during the pass: the viewers passed before it are one frame behind.
      if (this.passFrom === generation) break;
    }
    this.finished = true;
    return visited;
  }
}

/** A comment to every stream (closing those blocked too long), spread over turns like a fan-out. */
class HeartbeatPass implements Job {
  finished = true;
  private pass: MapIterator<StreamClient> | undefined;
  private now = 0;

  start(clients: Map<StreamClient, unknown>, now: number): void {
    this.pass = clients.keys();
    this.now = now;
    this.finished = false;
  }

  run(budget: number): number {
    let visited = 0;
    if (this.pass !== undefined) {
      for (const client of this.pass) {
        client.heartbeat(this.now);
        visited += 1;
        if (visited === budget) return visited;
      }
    }
    this.pass = undefined;
    this.finished = true;
    return visited;
  }
}

/** Sent before a stream is closed on shutdown: browsers reconnect (to another replica) at once. */
const SHUTDOWN_FRAME = 'retry: 250\nevent: shutdown\ndata: {"reconnect":true}\n\n';

export class StreamHub {
  private readonly topics = new Map<string, TopicState>();
  private readonly clients = new Map<StreamClient, Topic[]>();
  private readonly perCaller = new Map<string, number>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly heartbeatPass = new HeartbeatPass();
  /** Fan-outs not finished in the turn they began in. */
  private readonly jobs = new Set<TopicState>();
  private turn: NodeJS.Immediate | undefined;
  private readonly chunk: number;
  private readonly timing: PassTiming | undefined;
  private closing = false;

  constructor(private readonly options: StreamHubOptions) {
    this.chunk = options.chunk ?? FAN_OUT_CHUNK;
    const { onPass, now = () => performance.now() } = options;
    this.timing = onPass === undefined ? undefined : { now, onPass };
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** For status, metrics and tests: how many streams, how many of them blocked, what they hold. */
  stats(): { connections: number; topics: number; blocked: number; dropped: number; bufferedBytes: number } {
    let blocked = 0;
    let dropped = 0;
    let bufferedBytes = 0;
    for (const client of this.clients.keys()) {
      if (client.blocked) blocked += 1;
      dropped += client.dropped;
      bufferedBytes += client.bufferedBytes;
    }
    return { connections: this.clients.size, topics: this.topics.size, blocked, dropped, bufferedBytes };
  }

  /** Throws the 429 a new stream of `caller` gets when a limit is reached. */
  admit(caller: Caller): void {
    const { maxConnections, maxPerClient } = this.options;
    if (this.clients.size >= maxConnections) {
      throw new ApiError('RATE_LIMITED', `this server holds its maximum of ${maxConnections} streams; retry later or elsewhere`, {
        retryAfterSeconds: 5,
      });
    }
    if (maxPerClient > 0 && (this.perCaller.get(caller.account) ?? 0) >= maxPerClient) {
      throw new ApiError('RATE_LIMITED', `at most ${maxPerClient} streams per caller; close one first`, { retryAfterSeconds: 5 });
    }
  }

  attach(client: StreamClient, topics: Topic[]): void {
    if (this.closing) return client.end(SHUTDOWN_FRAME);
    this.clients.set(client, topics);
    this.perCaller.set(client.caller.account, (this.perCaller.get(client.caller.account) ?? 0) + 1);
    for (const topic of topics) {
      let state = this.topics.get(topic.id);
      const started = state !== undefined;
      if (state === undefined) {
        state = new TopicState(topic.id, this.timing);
        this.topics.set(topic.id, state);
      }
      state.viewers.set(client, { client, generation: state.generation });
      // A new topic's feed starts with its first viewer among its holders: its first read is put to that caller.
      if (!started) state.feed = this.options.feeds(topic, (event) => this.deliver(event), state.holders);
      else if (state.last !== undefined) client.send(topic.id, state.last.frame);
    }
  }

  detach(client: StreamClient): void {
    const topics = this.clients.get(client);
    if (topics === undefined) return;
    this.clients.delete(client);
    const account = client.caller.account;
    const count = (this.perCaller.get(account) ?? 1) - 1;
    if (count > 0) this.perCaller.set(account, count);
    else this.perCaller.delete(account);
    for (const topic of topics) {
      const state = this.topics.get(topic.id);
      if (state === undefined) continue;
      state.viewers.delete(client);
      if (state.viewers.size === 0) {
        state.feed.stop();
        this.topics.delete(topic.id);
        this.jobs.delete(state);
      }
    }
  }

  /**
   * A topic's new event, unless it says what the last one said: the first chunk of viewers is written
   * now, the others in the turns after (a fan-out in progress carries on with this newer frame).
   */
  deliver(event: TopicEvent): void {
    const state = this.topics.get(event.topic);
    if (state === undefined || state.last?.fingerprint === event.fingerprint) return;
    // Encoded once: every viewer's write takes the same bytes (a string would be encoded per socket).
    state.push(event.fingerprint, new Frame(frameOf(event)));
    this.schedule(state);
  }

  /** Shutdown: every stream gets a last event and ends; feeds stop. */
  close(): void {
    this.closing = true;
    clearInterval(this.heartbeat);
    clearImmediate(this.turn);
    this.jobs.clear();
    for (const client of [...this.clients.keys()]) {
      client.end(SHUTDOWN_FRAME);
      this.detach(client);
    }
  }

  private beat(): void {
    const idle = this.heartbeatPass.finished && this.jobs.size === 0;
    this.heartbeatPass.start(this.clients, Date.now());
    if (idle) this.heartbeatPass.run(this.chunk);
    if (!this.heartbeatPass.finished) this.turn ??= setImmediate(this.runTurn);
  }

  private schedule(state: TopicState): void {
    if (this.jobs.has(state)) return;
    state.run(this.chunk);
    if (state.finished) return;
    this.jobs.add(state);
    this.turn ??= setImmediate(this.runTurn);
  }

  /**
   * One chunk of writes, shared by the fan-outs in progress (one left unfinished goes to the back of the
   * line), then the heartbeat pass. A pass of comments to 10,000 streams takes as long as a fan-out: taken
   * in turn with one, it would delay that event's last viewers by as much. So it gets what the fan-outs
   * leave of a turn, and never less than an eighth, so that it ends (and closes blocked streams) anyway.
   */
  private readonly runTurn = (): void => {
    this.turn = undefined;
    const beating = !this.heartbeatPass.finished;
    const reserved = beating ? Math.ceil(this.chunk / 8) : 0;
    let budget = this.chunk - reserved;
    for (const state of [...this.jobs]) {
      if (budget <= 0) break;
      // Its topic lost its last viewer during this turn.
      if (!this.jobs.has(state)) continue;
      budget -= state.run(budget);
      this.jobs.delete(state);
      if (!state.finished) this.jobs.add(state);
    }
    if (beating) this.heartbeatPass.run(budget + reserved);
    if (this.jobs.size > 0 || !this.heartbeatPass.finished) this.turn = setImmediate(this.runTurn);
  };
}
