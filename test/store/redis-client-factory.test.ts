// How the service's ioredis clients behave through the two moments a failover puts them in: a Sentinel
// announcing the switch while the client is still asking a Sentinel where the primary is, and a command
// whose reply was lost with the link.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisConnection } from '../../src/store/redis-connection.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';
import { RedisSentinelGroup, until } from './redis-topology.js';
import { startProxy, TcpProxy } from './tcp-proxy.js';

const logger = pino({ level: 'silent' });
/** Long enough that the primary watch never steps in: these tests are about the client alone. */
const NO_WATCH_MS = 600_000;

test('+switch-master while the client is asking a Sentinel for the primary: the client reconnects to the new primary, never ends', async (t) => {
  const group = await RedisSentinelGroup.start();
  t.after(() => group.stop());
  // The client knows one Sentinel, through a proxy that can keep its answer back; it learns the other two
  // from it (ioredis's updateSentinels) and reaches those directly.
  const proxy = new TcpProxy(group.sentinels[0]?.port as number);
  await proxy.open();
  t.after(() => proxy.cut());
  const connection = new RedisConnection({
    target: {
      kind: 'redis-sentinel',
      sentinels: [{ host: '127.0.0.1', port: proxy.port }],
      name: RedisSentinelGroup.NAME,
      sentinelPassword: undefined,
      username: undefined,
      password: undefined,
      tls: false,
    },
    keyPrefix: 'mdp-test:',
    logger,
    checkMs: NO_WATCH_MS,
  });
  t.after(() => connection.close());
  assert.ok(await connection.waitReady(5_000));
  const client = connection.client;
  let ended = false;
  client.on('end', () => {
    ended = true;
  });

  // From here, whoever asks the proxied Sentinel waits for its answer: the reconnection after the kill
  // asks it (first or after the other two) and is still waiting when the Sentinels announce the switch.
  void proxy.holdNewConnections();
  await group.kill(group.primary);
  const direct = new Redis({ port: group.sentinels[1]?.port as number, lazyConnect: true });
  t.after(() => direct.disconnect());
  await until(
    'the Sentinels to name the replica (+switch-master published)',
    async () =>
      ((await direct.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', RedisSentinelGroup.NAME)) as string[])[1] === String(group.replica.port),
  );
  // The announcement reached every subscriber, in this process too.
  await turn();
  proxy.release();

  const onNewPrimary = () => connection.ready && connection.primary === `127.0.0.1:${group.replica.port}`;
  await until('the client on the new primary, or ended', async () => ended || onNewPrimary(), 15_000);
  assert.equal(ended, false, `the client ended (${connection.lastError}): ioredis would never reconnect it`);
  assert.ok(onNewPrimary());
  assert.equal(connection.client, client, 'the same client, no rescue needed');
  assert.equal(connection.rescues, 0);
});

test('a command whose reply was lost with the link is not sent again on the next link', async (t) => {
  const proxy = await startProxy(t);
  const prefix = redisPrefix(t);
  const connection = new RedisConnection({ target: { kind: 'redis', url: proxy.url }, keyPrefix: prefix, logger, checkMs: NO_WATCH_MS });
  t.after(() => connection.close());
  assert.ok(await connection.waitReady(2_000));
  const key = connection.key('in-flight');

  const executed = proxy.holdNextReply(3_000);
  const reply = connection.client.incr(key).catch((error: unknown) => error);
  await executed;
  const down = once(connection, 'state:down');
  await proxy.cut();
  await down;
  await proxy.open();
  await once(connection, 'state:ready');
  await connection.client.ping();

  const direct = new Redis(REDIS_URL);
  t.after(() => direct.disconnect());
  assert.equal(await direct.get(key), '1', 'run once, where it was first sent');
  assert.ok((await reply) instanceof Error, 'the caller heard a failure (and answered from local state)');
});
