// One broker stream for a deployment of replica processes on one real Redis: one replica holds the
// upstream socket (counted at the shared simulator) and relays every tick to the others' viewers; killed
// with SIGKILL, another takes the lease over, opens the one socket again, and the surviving viewers go on.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { busiestSymbols } from '../helpers/ibkr-socket.js';
import type { Replica } from '../economy/replicas.js';
import { ibkrCluster } from './ibkr-cluster.js';
import { eventually, type SseClient, SseClient as Client, ticksOnEveryReplica } from './sse-client.js';

async function cluster(t: TestContext, count: number) {
  const { ibkr, replicas, holderPid } = await ibkrCluster(t, count, { streaming: 'auto', sim: { sessionAt: () => 'regular' } });
  return { ibkr, replicas, holderPid: () => holderPid('stream:sandbox:ibkr:brokerQuotes'), busy: busiestSymbols(ibkr)[0]! };
}

async function viewers(t: TestContext, replicas: Replica[], perReplica: number, topic: string): Promise<SseClient[][]> {
  return Promise.all(
    replicas.map((r) => Promise.all(Array.from({ length: perReplica }, () => Client.open(t, `${r.url}/api/stream?${topic}`)))),
  );
}

const count = (c: SseClient) => c.of('brokerQuotes').length;

test('three replicas, one upstream socket: every replica relays the holder ticks; kill -9 the holder and another takes over', async (t) => {
  const { ibkr, replicas, holderPid, busy } = await cluster(t, 3);
  const byReplica = await viewers(t, replicas, 2, `brokerQuotes=${busy}`);
  await Promise.all(byReplica.flat().map((c) => c.until((s) => count(s) >= 6, 'streamed events on every replica', 30_000)));
  assert.equal(ibkr.stream.openSockets, 1, 'one upstream socket for the three replicas');
  assert.equal(ibkr.stream.accepted, 1);
  await eventually(() => ticksOnEveryReplica(byReplica) >= 3, 'three ticks seen on all three replicas', 30_000);

  const pid = await holderPid();
  const victim = replicas.findIndex((r) => r.child.pid === pid);
  assert.ok(victim >= 0, `the holder ${pid} is one of the replicas`);
  const killedAt = Date.now();
  await replicas[victim]!.kill('SIGKILL');
  const survivors = byReplica.filter((_, i) => i !== victim).flat();
  await eventually(() => ibkr.stream.accepted === 2 && ibkr.stream.openSockets === 1, 'the new holder connected', 30_000);
  const connectedAt = Date.now();
  const after = survivors.map(count);
  await Promise.all(survivors.map((c, i) => c.until((s) => count(s) >= after[i]! + 3, 'streamed events after the takeover', 30_000)));
  const newHolder = await holderPid();
  t.diagnostic(`takeover: the new holder's socket ${connectedAt - killedAt} ms after the kill`);
  assert.ok(
    replicas.some((r, i) => i !== victim && r.child.pid === newHolder),
    'a surviving replica holds the lease',
  );
  assert.ok(
    survivors.every((c) => !c.ended),
    'the surviving streams stayed open',
  );
  assert.equal(ibkr.stream.openSockets, 1, 'still one upstream socket');
});

test('a symbol asked over REST on a replica without the socket is subscribed by the holder and answered from the stream', async (t) => {
  const { ibkr, replicas, holderPid } = await cluster(t, 2);
  // Someone must need a symbol before anyone holds the socket.
  await fetch(`${replicas[0]!.url}/api/broker/quotes?symbols=AAPL`);
  await eventually(() => ibkr.stream.openSockets === 1, 'a holder connected', 20_000);
  const holder = await holderPid();
  const other = replicas.find((r) => r.child.pid !== holder)!;
  const ask = async () => {
    const res = await fetch(`${other.url}/api/broker/quotes?symbols=MSFT`);
    return { source: res.headers.get('x-data-source'), body: (await res.json()) as { quotes: Record<string, unknown> } };
  };
  assert.equal((await ask()).source, 'broker-snapshot');
  let answer = await ask();
  for (let i = 0; i < 50 && answer.source !== 'broker-stream'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await ask();
  }
  assert.equal(answer.source, 'broker-stream');
  assert.ok(answer.body.quotes.MSFT !== undefined);
  assert.equal(ibkr.stream.openSockets, 1);
  const status = (await (await fetch(`${other.url}/api/system/status`)).json()) as { brokerStream: Record<string, unknown> };
  assert.equal(status.brokerStream.role, 'relayed');
  assert.equal(status.brokerStream.available, true);
});
