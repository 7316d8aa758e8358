// Fans topic events out to the streams of this process. A topic's feed (a poller, or with Redis the
// replica-wide relay) starts with its first viewer and stops with its last; each event is framed once
// and written to every viewer; a new viewer gets the topic's latest event at once.
import { ApiError } from '../errors.js';
import type { StreamClient } from './stream-client.js';
import type { Topic } from './stream-topics.js';
import { frameOf, type TopicEvent } from './topic-event.js';

export interface TopicFeed {
  stop(): void;
}

/** Starts whatever produces a topic's events; `deliver` is called with each one. */
export type FeedFactory = (topic: Topic, deliver: (event: TopicEvent) => void) => TopicFeed;

export interface StreamHubOptions {
  feeds: FeedFactory;
  heartbeatMs: number;
  maxConnections: number;
  /** Per client address; 0 = no limit. */
  maxPerClient: number;
}

interface TopicState {
  viewers: Set<StreamClient>;
  feed: TopicFeed;
  last: { fingerprint: string; frame: Buffer } | undefined;
}

/** Sent before a stream is closed on shutdown: browsers reconnect (to another replica) at once. */
const SHUTDOWN_FRAME = 'retry: 250\nevent: shutdown\ndata: {"reconnect":true}\n\n';

export class StreamHub {
  private readonly topics = new Map<string, TopicState>();
  private readonly clients = new Map<StreamClient, Topic[]>();
  private readonly perAddress = new Map<string, number>();
  private readonly heartbeat: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly options: StreamHubOptions) {
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

  /** Throws the 429 a new stream from `address` gets when a limit is reached. */
  admit(address: string): void {
    const { maxConnections, maxPerClient } = this.options;
    if (this.clients.size >= maxConnections) {
      throw new ApiError('RATE_LIMITED', `this server holds its maximum of ${maxConnections} streams; retry later or elsewhere`, { retryAfterSeconds: 5 });
    }
    if (maxPerClient > 0 && (this.perAddress.get(address) ?? 0) >= maxPerClient) {
      throw new ApiError('RATE_LIMITED', `at most ${maxPerClient} streams per client address; close one first`, { retryAfterSeconds: 5 });
    }
  }

  attach(client: StreamClient, topics: Topic[]): void {
    if (this.closing) return client.end(SHUTDOWN_FRAME);
    this.clients.set(client, topics);
    this.perAddress.set(client.address, (this.perAddress.get(client.address) ?? 0) + 1);
    for (const topic of topics) {
      let state = this.topics.get(topic.id);
      if (state === undefined) {
        state = { viewers: new Set(), feed: { stop: () => {} }, last: undefined };
        this.topics.set(topic.id, state);
        state.feed = this.options.feeds(topic, (event) => this.deliver(event));
      }
      state.viewers.add(client);
      if (state.last !== undefined) client.send(topic.id, state.last.frame);
    }
  }

  detach(client: StreamClient): void {
    const topics = this.clients.get(client);
    if (topics === undefined) return;
    this.clients.delete(client);
    const count = (this.perAddress.get(client.address) ?? 1) - 1;
    if (count > 0) this.perAddress.set(client.address, count);
    else this.perAddress.delete(client.address);
    for (const topic of topics) {
      const state = this.topics.get(topic.id);
      if (state === undefined) continue;
      state.viewers.delete(client);
      if (state.viewers.size === 0) {
        state.feed.stop();
        this.topics.delete(topic.id);
      }
    }
  }

  /** A topic's new event: written to every viewer unless it says what the last one said. */
  deliver(event: TopicEvent): void {
    const state = this.topics.get(event.topic);
    if (state === undefined || state.last?.fingerprint === event.fingerprint) return;
    // Encoded once: every viewer's write takes the same bytes (a string would be encoded per socket).
    const frame = Buffer.from(frameOf(event));
    state.last = { fingerprint: event.fingerprint, frame };
    for (const client of state.viewers) client.send(event.topic, frame);
  }

  /** Shutdown: every stream gets a last event and ends; feeds stop. */
  close(): void {
    this.closing = true;
    clearInterval(this.heartbeat);
    for (const client of [...this.clients.keys()]) {
      client.end(SHUTDOWN_FRAME);
      this.detach(client);
    }
  }

  private beat(): void {
    const now = Date.now();
    for (const client of this.clients.keys()) client.heartbeat(now);
  }
}
