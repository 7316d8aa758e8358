// A cold burst on the broker endpoints (accounts, positions over pages, secdef lookups, snapshots) against
// a gateway that enforces 10 requests in any rolling second at arrival, with seeded arrival jitter: the
// gateway never answers 429 and every caller gets a 200, on one replica and on three sharing Redis. The
// guarantee is the margin (8 a second, 125 ms apart: eleven arrivals in a second would need the jitter to
// squeeze departures by 250 ms), not the timing of a lucky run. The gateway shares this process's event
// loop, so a stall here bunches its arrivals too: the injected jitter (100 ms) leaves 150 ms of the margin
// for that.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createIbkrSimulator, type IbkrSimulator } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { UNIVERSE } from '../../../src/sandbox/universe.js';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';

const JITTER_MS = 100;
const STOCKS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

async function jitteryGateway(t: TestContext): Promise<IbkrSimulator> {
  const gateway = await createIbkrSimulator({ jitterMs: JITTER_MS, seed: 20_261_123, penaltyMs: 10 * 60_000 });
  gateway.setPositionCount('DU1234567', 250);
  await gateway.listen();
  t.after(() => gateway.close());
  return gateway;
}

function replicaOf(t: TestContext, gateway: IbkrSimulator, env: Record<string, string> = {}): Promise<RunningApp> {
  return startApp(t, { env, configure: (c) => ({ ...c, broker: { ...c.broker, ibkr: { ...c.broker.ibkr, url: gateway.baseUrl } } }) });
}

/** Every broker endpoint at once, with its own symbols (each a secdef lookup, then snapshots with warm-up). */
async function coldBurst(running: RunningApp, symbols: string[]): Promise<number[]> {
  const paths = ['/api/broker/accounts', '/api/broker/positions', '/api/broker/health'];
  for (let i = 0; i < symbols.length; i += 4) paths.push(`/api/broker/quotes?symbols=${symbols.slice(i, i + 4).join(',')}`);
  const answers = await Promise.all(paths.map((path) => running.get(path)));
  for (const [i, res] of answers.entries()) assert.equal(res.status, 200, `${paths[i]}: ${res.text}`);
  return answers.map((res) => res.status);
}

test('one replica, cold burst: the gateway never answers 429', async (t) => {
  const gateway = await jitteryGateway(t);
  const running = await replicaOf(t, gateway);
  await coldBurst(running, STOCKS.slice(0, 16));
  t.diagnostic(`IBKR calls: ${gateway.count()}, peak per rolling second at the gateway: ${gateway.peakPerSecond}`);
  assert.equal(gateway.paceRefusals, 0, 'no 429 at the gateway');
  assert.ok(gateway.count() >= 20, `a real burst (${gateway.count()} calls)`);
  assert.ok(gateway.peakPerSecond <= 10, `peak ${gateway.peakPerSecond}`);
});

test('three replicas cold-starting together on one Redis: the gateway never answers 429', async (t) => {
  const gateway = await jitteryGateway(t);
  const env = { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) };
  const replicas = await Promise.all([0, 1, 2].map(() => replicaOf(t, gateway, env)));
  await Promise.all(replicas.map((running, i) => coldBurst(running, STOCKS.slice(i * 8, i * 8 + 8))));
  t.diagnostic(`IBKR calls: ${gateway.count()}, peak per rolling second at the gateway: ${gateway.peakPerSecond}`);
  assert.equal(gateway.paceRefusals, 0, 'no 429 at the gateway');
  assert.ok(gateway.count() >= 30, `a real burst (${gateway.count()} calls)`);
  assert.ok(gateway.peakPerSecond <= 10, `peak ${gateway.peakPerSecond}`);
});
