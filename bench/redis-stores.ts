// BENCH_REDIS=cluster runs a benchmark (bench/cache-hit.ts, bench/quota-economy.ts) on Redis, in one run on each of: one redis-server node and a Cluster
// of three primaries (both started here from redis-server, test/store/redis-topology.ts), so the two are
// compared on the same machine minutes apart. Unset, the benchmark runs on the embedded store as before.
import { randomBytes } from 'node:crypto';
import { RedisCluster, RedisStandalone } from '../test/store/redis-topology.js';

export interface StoreVariant {
  /** Appended to the variant's name in the report. */
  name: string;
  env: Record<string, string>;
}

/** Runs `body` once per store; one embedded run (empty env) when BENCH_REDIS is not `cluster`. */
export async function onEachStore(body: (store: StoreVariant) => Promise<void>): Promise<void> {
  if (process.env.BENCH_REDIS !== 'cluster') return body({ name: '', env: {} });
  const prefix = () => `mdp-bench:${randomBytes(4).toString('hex')}:`;
  const node = await RedisStandalone.start();
  try {
    await body({ name: ', Redis one node', env: { REDIS_URL: node.url, REDIS_KEY_PREFIX: prefix() } });
  } finally {
    await node.stop();
  }
  const cluster = await RedisCluster.start(3);
  try {
    await body({ name: ', Redis Cluster (3 primaries)', env: { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_KEY_PREFIX: prefix() } });
  } finally {
    await cluster.stop();
  }
}
