// The relays' pub/sub connection (a subscribed connection can run nothing else), as one object that
// outlives its ioredis client: it remembers its channels and gives them to every link that becomes ready, so
// that a reconnected client, or a new one when the primary watch replaces an ended or stuck client, hears
// them all and its messages reach the same listeners.
//
// ioredis alone is not enough: it subscribes again only to the channels the server had confirmed. A
// SUBSCRIBE still queued when the link's ready check times out (a loaded replica starting) is rejected with
// the queue, and the channel would stay silent for good: a replica relaying no broker ticks, its viewers on
// snapshots (test/store/redis-subscriber.test.ts). A channel given twice is subscribed once.
import { EventEmitter } from 'node:events';
import type { RedisClient } from './redis-client-factory.js';
import type { WatchedClient } from './primary-watch.js';

export class RedisSubscriber extends EventEmitter implements WatchedClient {
  readonly purpose = 'pub/sub';
  private current: RedisClient;
  private readonly channels = new Set<string>();

  /** `open` makes a client; `closed` is told when this subscriber is done with for good. */
  constructor(
    private readonly open: () => RedisClient,
    private readonly closed: () => void,
  ) {
    super();
    this.current = this.attach(open());
  }

  get client(): RedisClient {
    return this.current;
  }

  /** Emits `message` (channel, text) for every message on `channel`, across replaced clients. */
  subscribe(channel: string): Promise<unknown> {
    this.channels.add(channel);
    return this.current.subscribe(channel);
  }

  unsubscribe(channel: string): Promise<unknown> {
    this.channels.delete(channel);
    return this.current.unsubscribe(channel);
  }

  replace(): void {
    const old = this.current;
    this.current = this.attach(this.open());
    old.disconnect();
  }

  disconnect(): void {
    this.closed();
    this.current.disconnect();
  }

  private attach(client: RedisClient): RedisClient {
    // Its failures show as the relays' failed commands and in the watch's verdict, not as unhandled events.
    client.on('error', () => {});
    client.on('ready', () => {
      // A failure here shows as the link's next fault; the next ready link is given the channels again.
      if (client === this.current && this.channels.size > 0) client.subscribe(...this.channels).catch(() => {});
    });
    client.on('message', (channel: string, text: string) => {
      if (client === this.current) this.emit('message', channel, text);
    });
    return client;
  }
}
