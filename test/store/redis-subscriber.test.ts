// The relays' pub/sub connection on a real Redis behind a proxy that holds new links: what it was asked to
// hear, it hears once a link is ready, whatever became of the SUBSCRIBE it was asked with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { createClient } from '../../src/store/redis-client-factory.js';
import { RedisSubscriber } from '../../src/store/redis-subscriber.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';
import { until } from './redis-topology.js';
import { startProxy } from './tcp-proxy.js';

test('a channel asked for while the link comes up is heard after a handshake that timed out (ioredis drops the queued SUBSCRIBE)', async (t) => {
  const proxy = await startProxy(t);
  // The answer to the ready check (INFO) of the first link, past the command timeout: ioredis gives the link
  // up and rejects its queue, the SUBSCRIBE in it too.
  const held = proxy.holdNextReply(1_000, (chunk) => chunk.includes('redis_version'));
  const subscriber = new RedisSubscriber(
    () => createClient({ kind: 'redis', url: proxy.url }, 200, 'pub/sub'),
    () => {},
  );
  t.after(() => subscriber.disconnect());
  const heard: string[] = [];
  subscriber.on('message', (_channel: string, text: string) => heard.push(text));
  const channel = `${redisPrefix(t)}relay`;

  await assert.rejects(subscriber.subscribe(channel), /timed out/);
  await held;

  const publisher = new Redis(REDIS_URL);
  t.after(() => publisher.disconnect());
  await until(
    'a message on the channel asked for before the handshake failed',
    async () => {
      await publisher.publish(channel, 'tick');
      return heard.includes('tick');
    },
    5_000,
  );
  assert.equal(subscriber.client.status, 'ready');
});
