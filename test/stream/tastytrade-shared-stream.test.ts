// Tastytrade's DXLink feed for a deployment of replica processes on one real Redis: one replica holds the
// one DXLink socket (counted at the shared simulator) and relays every tick to the others' viewers;
// killed with SIGKILL, another takes the lease over and opens the one socket again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTastytradeSimulator } from '../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { busiestStocks } from '../helpers/tastytrade-stream.js';
import { replicaCluster } from './ibkr-cluster.js';
import { eventually, SseClient, ticksOnEveryReplica } from './sse-client.js';

test('three replicas, one DXLink socket: every replica relays the holder ticks; kill -9 the holder and another takes over', async (t) => {
  const sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r', sessionAt: () => 'regular' });
  await sim.listen();
  t.after(() => sim.close());
  const { replicas, holderPid } = await replicaCluster(t, 3, {
    BROKER: 'tastytrade',
    TASTYTRADE_URL: sim.origin,
    TASTYTRADE_CLIENT_SECRET: 's',
    TASTYTRADE_REFRESH_TOKEN: 'r',
    BROKER_STREAMING: 'auto',
  });
  const [busy] = busiestStocks(sim) as [string];
  const byReplica = await Promise.all(
    replicas.map((r) => Promise.all([0, 1].map(() => SseClient.open(t, `${r.url}/api/stream?brokerQuotes=${busy}`)))),
  );
  const count = (c: SseClient) => c.of('brokerQuotes').length;
  await Promise.all(byReplica.flat().map((c) => c.until((s) => count(s) >= 6, 'streamed events on every replica', 30_000)));
  assert.equal(sim.stream.openSockets, 1, 'one DXLink socket for the three replicas');
  assert.equal(sim.stream.accepted, 1);
  await eventually(() => ticksOnEveryReplica(byReplica) >= 3, 'three ticks seen on all three replicas', 30_000);

  // Scoped by mode and account: stream:live:tastytrade@<account hash>:brokerQuotes.
  const lease = 'stream:*:tastytrade*:brokerQuotes';
  const pid = await holderPid(lease);
  const victim = replicas.findIndex((r) => r.child.pid === pid);
  assert.ok(victim >= 0, `the holder ${pid} is one of the replicas`);
  const killedAt = Date.now();
  await replicas[victim]?.kill('SIGKILL');
  const survivors = byReplica.filter((_, i) => i !== victim).flat();
  await eventually(() => sim.stream.accepted === 2 && sim.stream.openSockets === 1, 'the new holder connected', 30_000);
  t.diagnostic(`takeover: the new holder's DXLink socket ${Date.now() - killedAt} ms after the kill`);
  const after = survivors.map(count);
  await Promise.all(survivors.map((c, i) => c.until((s) => count(s) >= (after[i] ?? 0) + 3, 'events after the takeover', 30_000)));
  assert.ok(
    survivors.every((c) => !c.ended),
    'the surviving streams stayed open',
  );
  assert.equal(sim.stream.openSockets, 1, 'still one DXLink socket');
});
