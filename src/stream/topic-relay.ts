// Topics across replicas (REDIS_URL): one replica polls each topic, holding a short lease that it renews
// every second; the others take the lease over when it lapses (the holder died), within
// LEASE_MS + RENEW_MS. The holder publishes every event on the topic's channel; every replica relays the
// channel to its own viewers. Without Redis for the moment, a replica polls for its own viewers.
//
// A topic's calls are put to the accounts of the callers holding it on every replica (fair shares): each replica
// names its own holders in the topic's shared set as it renews, and the polling replica reads them all there.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { RedisFlightLock } from '../cache/flight-lock.js';
import type { DegradedMode, SharedStore } from '../store/degraded-mode.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
import type { RedisSubscriber } from '../store/redis-subscriber.js';
import type { LiveTopics } from './live-topics.js';
import type { Caller } from '../core/caller.js';
import type { FeedFactory, TopicFeed } from './stream-hub.js';
import type { Topic } from './stream-topics.js';
import type { TopicEvent } from './topic-event.js';
import { readTopic, sample, TopicPoller } from './topic-poller.js';

/** KEYS: lease. ARGV: holder value, ms. -> 1 when this holder has (or now takes) the lease, else 0. */
/**
 * KEYS: the topic's holders (a sorted set: member `<weight>|<label>|<account>`, score its expiry). ARGV: ms a
 * member lives, then this replica's holders. -> every replica's holders, expired ones dropped.
 */
const HOLDERS = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZRANGE', KEYS[1], 0, -1)
`);

/** A holder in the shared set (caller.ts Caller, without the key: the budgets need the account, weight and label). */
function memberOf(caller: Caller): string {
  return `${caller.weight}|${caller.label}|${caller.account}`;
}

function holderOf(member: string): Caller | undefined {
  const [weight, label, ...account] = member.split('|');
  if (label === undefined || account.length === 0) return undefined;
  return { weight: Number(weight) || 1, label, account: account.join('|'), key: undefined };
}

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
    return (topic, deliver, holders) => (topic.kind === 'status' ? local(topic, deliver, holders) : this.feed(topic, deliver, holders));
  }

  leaseName(topic: Topic): string {
    return `stream:${this.options.scopeOf(topic)}:${topic.id}`;
  }

  private feed(topic: Topic, deliver: (event: TopicEvent) => void, holders: () => readonly Caller[]): TopicFeed {
    const channel = this.channel(this.leaseName(topic), (payload) => deliver(payload as TopicEvent));
    const lease = new TopicLease(this, topic, deliver, (event) => channel.publish(event), holders);
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

  /** Names this replica's holders of the topic `name` and reads every replica's; this replica's alone when Redis cannot say. */
  sharedHolders(name: string, local: readonly Caller[]): Promise<readonly Caller[]> {
    const key = this.redis.key(`holders:${name}`);
    const ttl = 3 * (this.options.renewMs ?? 1_000);
    return this.degraded.attempt(
      'stream-leases',
      async (client) => {
        const members = await HOLDERS.run<string[]>(client, [key], [ttl, ...local.map(memberOf)]);
        return members.map(holderOf).filter((caller): caller is Caller => caller !== undefined);
      },
      () => local,
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
  /** The topic's holders on every replica, as last read. */
  private everyone: readonly Caller[] = [];

  constructor(
    private readonly relay: TopicRelay,
    private readonly topic: Topic,
    private readonly deliver: (event: TopicEvent) => void,
    private readonly publish: (event: TopicEvent) => void,
    private readonly holders: () => readonly Caller[],
  ) {
    this.name = relay.leaseName(topic);
    const { topics, logger, renewMs } = relay.options;
    // New viewers get the value at once, through the shared cache, whoever polls.
    void readTopic(topics, topic, false, logger, holders()).then(({ event }) => this.stopped || deliver(event));
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
    const [held, everyone] = await Promise.all([this.relay.hold(this.name), this.relay.sharedHolders(this.name, sample(this.holders()))]);
    this.everyone = everyone;
    if (this.stopped) {
      if (held === true) await this.relay.release(this.name);
      return;
    }
    this.holding = held === true;
    // Redis unavailable: poll for this replica's own viewers (budgets stay guarded by the cache path).
    const poll = held !== false;
    if (poll && this.poller === undefined) {
      const { topics, logger } = this.relay.options;
      // Every replica's holders, as last read, with this replica's own as they are now.
      const holders = () => [...new Set([...this.holders(), ...this.everyone])];
      this.poller = new TopicPoller(this.topic, topics, (event) => this.emit(event), logger, holders);
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
