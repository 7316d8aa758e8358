// The relays' pub/sub connection (a subscribed connection can run nothing else), as one object that
// outlives its ioredis client: it remembers its channels, so that when the primary watch replaces an
// ended or stuck client, the new one subscribes to them again and its messages reach the same listeners.
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
    // Queued until the new client is connected (pub/sub clients keep an offline queue).
    if (this.channels.size > 0) this.current.subscribe(...this.channels).catch(() => {});
  }

  disconnect(): void {
    this.closed();
    this.current.disconnect();
  }

  private attach(client: RedisClient): RedisClient {
    // Its failures show as the relays' failed commands and in the watch's verdict, not as unhandled events.
    client.on('error', () => {});
    client.on('message', (channel: string, text: string) => {
      if (client === this.current) this.emit('message', channel, text);
    });
    return client;
  }
}
