// Streams across replica processes on one real Redis: one replica polls a topic and the others relay it
// (calls counted at one shared IBKR simulator), and when the polling replica is killed with SIGKILL
// another takes the lease over and the surviving streams go on.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createIbkrSimulator } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { type Replica, startCountingUpstream, upstreamEnv } from '../economy/replicas.js';
import { ALL_OF_THE_PRIVATE_SIDE, PRIVATE_SIDE_ENV, privateSideIn } from '../helpers/private-side.js';
import { ibkrCluster, replicaCluster } from './ibkr-cluster.js';
import { eventually, SseClient } from './sse-client.js';

const TOPIC = 'brokerQuotes=AAPL,SPY';
const SNAPSHOT = '/iserver/marketdata/snapshot';

async function cluster(t: TestContext, count: number) {
  // The polled topic (the streamed one's replicas: test/stream/shared-quote-stream.test.ts).
  const { ibkr, replicas, holderPid } = await ibkrCluster(t, count, { streaming: 'off' });
  return { ibkr, replicas, holderPid: () => holderPid('stream:sandbox:ibkr:brokerQuotes:AAPL,SPY') };
}

async function viewers(t: TestContext, replicas: Replica[], perReplica: number): Promise<SseClient[][]> {
  return Promise.all(
    replicas.map((r) => Promise.all(Array.from({ length: perReplica }, () => SseClient.open(t, `${r.url}/api/stream?${TOPIC}`)))),
  );
}

const count = (c: SseClient) => c.of('brokerQuotes').length;

test('three replicas, one poller: every viewer on every replica gets the same events for the calls of one', async (t) => {
  const { ibkr, replicas, holderPid } = await cluster(t, 3);
  const clients = (await viewers(t, replicas, 5)).flat();
  await Promise.all(clients.map((c) => c.until((s) => count(s) >= 1, 'a first event')));
  const before = ibkr.gatewayCount(SNAPSHOT);
  const start = clients.map(count);
  await Promise.all(clients.map((c, i) => c.until((s) => count(s) >= start[i]! + 4, 'four more events')));
  const calls = ibkr.gatewayCount(SNAPSHOT) - before;
  t.diagnostic(`snapshot calls while 15 viewers on 3 replicas got 4 events each: ${calls}`);
  assert.ok(calls <= 6, `one poller for the topic: ${calls} snapshot calls for 4 events`);
  assert.ok(replicas.map((r) => r.child.pid).includes(await holderPid()), 'a replica holds the lease');
  // The same event (same id) reached viewers of every replica: it was produced once.
  const ids = clients.map((c) => new Set(c.of('brokerQuotes').map((e) => e.id)));
  const shared = [...ids[0]!].filter((id) => ids.every((set) => set.has(id)));
  assert.ok(shared.length >= 3, `events seen by all 15 viewers: ${shared.length}`);
});

test('kill -9 the polling replica: another takes the lease over and its viewers keep getting events', async (t) => {
  const { replicas, holderPid } = await cluster(t, 3);
  const byReplica = await viewers(t, replicas, 2);
  await Promise.all(byReplica.flat().map((c) => c.until((s) => count(s) >= 2, 'events before the kill')));
  const pid = await holderPid();
  const victim = replicas.findIndex((r) => r.child.pid === pid);
  assert.ok(victim >= 0, `the holder ${pid} is one of the replicas`);
  const killedAt = Date.now();
  await replicas[victim]!.kill('SIGKILL');
  const survivors = byReplica.filter((_, i) => i !== victim).flat();
  const after = survivors.map(count);
  // Before the takeover nothing is published; after it, every surviving viewer gets events again.
  await Promise.all(survivors.map((c, i) => c.until((s) => count(s) >= after[i]! + 3, 'events after the takeover', 30_000)));
  const resumedAt = Math.min(...survivors.map((c) => c.of('brokerQuotes').find((e) => e.at > killedAt + 1_100)?.at ?? Infinity));
  const newHolder = await holderPid();
  t.diagnostic(
    `takeover: longest gap between events ${Math.max(...survivors.map(longestGap))} ms; first event more than 1.1 s after the kill came ${resumedAt - killedAt} ms after it`,
  );
  assert.notEqual(newHolder, pid);
  assert.ok(
    replicas.some((r, i) => i !== victim && r.child.pid === newHolder),
    'a surviving replica holds the lease',
  );
  assert.ok(
    survivors.every((c) => !c.ended),
    'the surviving streams stayed open',
  );
  await eventually(() => byReplica[victim]!.every((c) => c.ended), 'the killed replica streams to end');
});

function longestGap(client: SseClient): number {
  const times = client.of('brokerQuotes').map((e) => e.at);
  return Math.max(0, ...times.slice(1).map((at, i) => at - times[i]!));
}

test("the status topic on two replicas: polled by each for its own viewers, an outsider's stream never carries the local view, a local viewer's always does", async (t) => {
  const ibkr = await createIbkrSimulator();
  await ibkr.listen();
  t.after(() => ibkr.close());
  const alphaVantage = await startCountingUpstream(t);
  const { replicas } = await replicaCluster(t, 2, {
    ...upstreamEnv(alphaVantage),
    ...PRIVATE_SIDE_ENV,
    IBKR_GATEWAY_URL: ibkr.baseUrl,
    // Behind a proxy on loopback that TRUST_PROXY names: X-Forwarded-For plays the caller.
    TRUST_PROXY: '127.0.0.1',
  });
  const outsider = { 'x-forwarded-for': '203.0.113.9' };
  const viewers = await Promise.all(
    replicas.flatMap((replica) =>
      [false, true].map(async (local) => ({
        local,
        replica,
        stream: await SseClient.open(t, `${replica.url}/api/stream?status=true`, local ? {} : outsider),
      })),
    ),
  );
  await Promise.all(viewers.map(({ stream }) => stream.until((s) => s.of('status').length >= 1, 'a first status')));
  // A provider call on each replica changes both of its views: each is sent again, by that replica.
  for (const replica of replicas) assert.equal((await fetch(`${replica.url}/api/provider-a/quote?symbol=IBM`)).status, 200);
  await Promise.all(viewers.map(({ stream }) => stream.until((s) => s.of('status').length >= 2, 'a changed status')));
  for (const { local, replica, stream } of viewers) {
    const what = `${local ? 'local' : 'outsider'} on ${replica.url}`;
    for (const event of stream.of('status'))
      assert.deepEqual(privateSideIn(event.data), local ? ALL_OF_THE_PRIVATE_SIDE : [], `${what}: ${event.data}`);
  }
});
