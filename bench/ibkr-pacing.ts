// IBKR pacing: a cold burst (accounts, positions over pages, secdef lookups, snapshots with warm-up, health)
// against the simulated gateway enforcing 10 requests in any rolling second at arrival, with a 10-minute
// penalty box and seeded arrival jitter. Compares the pacing at the gateway's own limit (10 a second,
// 100 ms apart, each replica on its own) with the service's (8 a second, 125 ms apart, shared through
// Redis), on one replica and on three. Figures: calls, peak per rolling second at the gateway, 429s,
// and the broker answers that failed.
//
// Runnable alone: `npx tsx bench/ibkr-pacing.ts` (needs Redis at REDIS_URL, default 127.0.0.1:6379).
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { RequestPacer, type Pacer } from '../src/broker/request-pacer.js';
import { SharedRequestPacer } from '../src/broker/shared-request-pacer.js';
import { createIbkrSimulator, type IbkrSimulator } from '../src/sandbox/ibkr/ibkr-simulator.js';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { DegradedMode } from '../src/store/degraded-mode.js';
import { RedisConnection } from '../src/store/redis-connection.js';
import { IbkrBroker } from '../src/upstreams/ibkr/ibkr-broker.js';
import { ibkrPacerOptions } from '../src/upstreams/ibkr/ibkr-gateway.js';

const JITTER_MS = 150;
const STOCKS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);
const logger = pino({ level: 'silent' });

interface Variant {
  name: string;
  replicas: number;
  shared: boolean;
  perSecond: number;
}

const VARIANTS: Variant[] = [
  { name: 'gateway limit, 10/s', replicas: 1, shared: false, perSecond: 10 },
  { name: 'margin 8/s', replicas: 1, shared: false, perSecond: 8 },
  { name: 'gateway limit, 10/s', replicas: 3, shared: false, perSecond: 10 },
  { name: 'margin 8/s, shared', replicas: 3, shared: true, perSecond: 8 },
];

export default async function ibkrPacingBench(): Promise<void> {
  console.log(
    `\nIBKR pacing: cold burst against a gateway enforcing 10 in any rolling second at arrival (penalty box 10 min), arrival jitter 0-${JITTER_MS} ms (seeded)`,
  );
  console.log(
    `${'pacing'.padEnd(24)}${'replicas'.padStart(9)}${'calls'.padStart(7)}${'peak/s'.padStart(8)}${'429s'.padStart(6)}${'answers'.padStart(9)}${'failed'.padStart(8)}`,
  );
  for (const variant of VARIANTS) {
    const r = await run(variant);
    console.log(
      `${variant.name.padEnd(24)}${String(variant.replicas).padStart(9)}${String(r.calls).padStart(7)}${String(r.peak).padStart(8)}${String(r.refusals).padStart(6)}${String(r.answers).padStart(9)}${String(r.failed).padStart(8)}`,
    );
  }
}

async function run(variant: Variant): Promise<{ calls: number; peak: number; refusals: number; answers: number; failed: number }> {
  const gateway = await createIbkrSimulator({ jitterMs: JITTER_MS, seed: 20_261_123, penaltyMs: 600_000 });
  gateway.setPositionCount('DU1234567', 250);
  await gateway.listen();
  const prefix = `mdp-bench:${randomBytes(6).toString('hex')}:`;
  const replicas = await Promise.all(Array.from({ length: variant.replicas }, () => replica(gateway, variant, prefix)));
  try {
    const work = replicas.flatMap(({ broker }, i) => {
      const symbols = STOCKS.slice(i * 12, i * 12 + 12);
      const quotes = [0, 4, 8].map((at) => () => broker.quotes(symbols.slice(at, at + 4)));
      // Accounts and positions from one replica only, as the cross-replica cache lock arranges.
      const portfolio = i === 0 ? [() => broker.accounts(), () => broker.positions()] : [];
      return [...portfolio, ...quotes, () => broker.health()];
    });
    const outcomes = await Promise.allSettled(work.map((call) => call()));
    return {
      calls: gateway.count(),
      peak: gateway.peakPerSecond,
      refusals: gateway.paceRefusals,
      answers: outcomes.length,
      failed: outcomes.filter((o) => o.status === 'rejected').length,
    };
  } finally {
    for (const r of replicas) await r.close();
    await gateway.close();
  }
}

async function replica(gateway: IbkrSimulator, variant: Variant, prefix: string) {
  const options = ibkrPacerOptions(variant.perSecond);
  let pacer: Pacer = new RequestPacer(options);
  let close = async (): Promise<void> => {};
  if (variant.shared) {
    const target = { kind: 'redis', url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } as const;
    const redis = new RedisConnection({ target, keyPrefix: prefix, logger });
    await redis.waitReady(2_000);
    const degraded = new DegradedMode(redis);
    const { heartbeat } = degraded;
    await heartbeat.beat();
    pacer = new SharedRequestPacer(options, { redis, heartbeat, degraded }, 'ibkr:bench');
    close = async () => {
      await heartbeat.stop();
      const keys = await redis.client.keys(`${prefix}*`);
      if (keys.length > 0) await redis.client.del(...keys);
      await redis.close();
    };
  }
  const broker = new IbkrBroker({
    url: gateway.baseUrl,
    tlsVerify: false,
    timeoutMs: 8_000,
    logger,
    tickleIntervalMs: 0,
    gateway: { pacer },
  });
  return {
    broker,
    close: async () => {
      await broker.close();
      await close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await ibkrPacingBench();
