// Topics across replicas (REDIS_URL): one replica polls each topic, holding a short lease that it renews
// every second; the others take the lease over when it lapses (the holder died), within
// LEASE_MS + RENEW_MS. The holder publishes every event on the topic's channel; every replica relays the
// channel to its own viewers. Without Redis for the moment, a replica polls for its own viewers.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { RedisFlightLock } from '../cache/flight-lock.js';
import type { DegradedMode, SharedStore } from '../store/degraded-mode.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
import type { RedisSubscriber } from '../store/redis-subscriber.js';
import type { LiveTopics } from './live-topics.js';
import type { FeedFactory, TopicFeed } from './stream-hub.js';
import type { Topic } from './stream-topics.js';
import type { TopicEvent } from './topic-event.js';
import { readTopic, TopicPoller } from './topic-poller.js';

/** KEYS: lease. ARGV: holder value, ms. -> 1 when this holder has (or now takes) the lease, else 0. */
const HOLD = new RedisScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) return 1 end
if not holder then redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2])) return 1 end
return 0
`);

export interface TopicRelayOptions {
  shared: SharedStore;
  topics: LiveTopics;
  logger: Logger;
  /**
   * The stored-state scope of the upstream behind a topic (data mode and upstream identity): replicas
   * reading the same upstream share a topic's lease and channel, others never do.
   */
  scopeOf: (topic: Topic) => string;
  leaseMs?: number;
  renewMs?: number;
}

interface Message {
  from: string;
  event: unknown;
}

/** A deployment-wide channel: what one replica publishes reaches every other replica reading the channel. */
export interface RelayChannel {
  publish(payload: unknown): void;
  close(): void;
}

export class TopicRelay {
  /** Who this replica is in lease values and messages (the pid shows an operator which process polls). */
  readonly holderId = `${process.pid}:${randomBytes(8).toString('base64url')}`;
  /** Kept across a replaced client, with its channels (redis-subscriber.ts). */
  private readonly subscriber: RedisSubscriber;
  private readonly channels = new Map<string, (payload: unknown) => void>();
  private readonly leases = new Set<TopicLease>();
  private readonly lock: RedisFlightLock;

  constructor(readonly options: TopicRelayOptions) {
    // Classic pub/sub: on a Cluster a message published on any node reaches subscribers on every node.
    this.subscriber = options.shared.redis.subscriber();
    this.subscriber.on('message', (channel: string, text: string) => this.receive(channel, text));
    this.lock = new RedisFlightLock(options.shared);
  }

  get redis(): RedisConnection {
    return this.options.shared.redis;
  }

  /** The degraded-mode policy the relay's leases, channels and shared demand follow. */
  get degraded(): DegradedMode {
    return this.options.shared.degraded;
  }

  /** The hub's feed factory: the status topic describes this replica, so it is always polled here. */
  feeds(local: FeedFactory): FeedFactory {
    return (topic, deliver) => (topic.kind === 'status' ? local(topic, deliver) : this.feed(topic, deliver));
  }

  leaseName(topic: Topic): string {
    return `stream:${this.options.scopeOf(topic)}:${topic.id}`;
  }

  private feed(topic: Topic, deliver: (event: TopicEvent) => void): TopicFeed {
    const channel = this.channel(this.leaseName(topic), (payload) => deliver(payload as TopicEvent));
    const lease = new TopicLease(this, topic, deliver, (event) => channel.publish(event));
    this.leases.add(lease);
    return {
      stop: () => {
        this.leases.delete(lease);
        void lease.stop();
        channel.close();
      },
    };
  }

  /** The channel `name` (a lease name): every replica's messages but this one's own reach `receive`. */
  channel(name: string, receive: (payload: unknown) => void): RelayChannel {
    const channel = this.redis.key(name);
    this.channels.set(channel, receive);
    this.subscriber.subscribe(channel).catch((error: unknown) => this.redis.noteFailure(error));
    return {
      publish: (payload) => this.publish(channel, payload),
      close: () => {
        this.channels.delete(channel);
        this.subscriber.unsubscribe(channel).catch(() => {});
      },
    };
  }

  /** The lease: true when this replica holds it, false when another does, undefined when Redis cannot say. */
  hold(name: string): Promise<boolean | undefined> {
    const lease = this.redis.key(`lock:${name}`);
    return this.degraded.attempt(
      'stream-leases',
      async (client) => (await HOLD.run<number>(client, [lease], [this.holderId, this.options.leaseMs ?? 3_000])) === 1,
      () => undefined,
    );
  }

  release(name: string): Promise<void> {
    return this.lock.release(name, this.holderId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.leases].map((lease) => lease.stop()));
    this.leases.clear();
    this.subscriber.disconnect();
  }

  private publish(channel: string, event: unknown): void {
    const message: Message = { from: this.holderId, event };
    this.redis.client.publish(channel, JSON.stringify(message)).catch((error: unknown) => this.redis.noteFailure(error));
  }

  private receive(channel: string, text: string): void {
    const deliver = this.channels.get(channel);
    if (deliver === undefined) return;
    try {
      const message = JSON.parse(text) as Message;
      if (message.from !== this.holderId) deliver(message.event);
    } catch {
      this.options.logger.warn({ channel }, 'unreadable stream message ignored');
    }
  }
}

/** One topic on one replica: a first look for its viewers, then polling while this replica holds the lease. */
class TopicLease {
  private readonly name: string;
  private readonly timer: NodeJS.Timeout;
  private poller: TopicPoller | undefined;
  private holding = false;
  private stopped = false;

  constructor(
    private readonly relay: TopicRelay,
    private readonly topic: Topic,
    private readonly deliver: (event: TopicEvent) => void,
    private readonly publish: (event: TopicEvent) => void,
  ) {
    this.name = relay.leaseName(topic);
    const { topics, logger, renewMs } = relay.options;
    // New viewers get the value at once, through the shared cache, whoever polls.
    void readTopic(topics, topic, false, logger).then(({ event }) => this.stopped || deliver(event));
    void this.renew();
    this.timer = setInterval(() => void this.renew(), renewMs ?? 1_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.poller?.stop();
    this.poller = undefined;
    // Handing over at once rather than when the lease lapses.
    if (this.holding) await this.relay.release(this.name);
    this.holding = false;
  }

  private async renew(): Promise<void> {
    const held = await this.relay.hold(this.name);
    if (this.stopped) {
      if (held === true) await this.relay.release(this.name);
      return;
    }
    this.holding = held === true;
    // Redis unavailable: poll for this replica's own viewers (budgets stay guarded by the cache path).
    const poll = held !== false;
    if (poll && this.poller === undefined) {
      const { topics, logger } = this.relay.options;
      this.poller = new TopicPoller(this.topic, topics, (event) => this.emit(event), logger);
      this.poller.start();
    } else if (!poll && this.poller !== undefined) {
      this.poller.stop();
      this.poller = undefined;
    }
  }

  private emit(event: TopicEvent): void {
    this.deliver(event);
    if (this.holding) this.publish(event);
  }
}
