// Service replica processes on one real Redis (a random key prefix) in front of one IBKR simulator in this
// process (or any upstream, given its environment), for the tests of what replicas share: a polled
// topic's lease, the broker stream's.
import type { TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { createIbkrSimulator, type IbkrSimulator, type IbkrSimulatorOptions } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { tempDir } from '../helpers/config.js';
import { type Replica, startReplica } from '../economy/replicas.js';
import { REDIS_URL, redisPrefix } from '../store/redis-helper.js';

export interface ReplicaCluster {
  replicas: Replica[];
  /** The pid of the replica holding the lease `name` (the lease value starts with it; `replicaCluster`'s may be a glob). */
  holderPid(name: string): Promise<number>;
}

export interface IbkrCluster extends ReplicaCluster {
  ibkr: IbkrSimulator;
}

/** `count` replicas with `env` (the broker's settings) on one Redis under a prefix of their own. */
export async function replicaCluster(t: TestContext, count: number, env: Record<string, string>): Promise<ReplicaCluster> {
  const prefix = redisPrefix(t);
  const common = { REDIS_URL, REDIS_KEY_PREFIX: prefix, STATE_DIR: tempDir(t), OVERVIEW_SOURCE: 'none', STREAM_MAX_PER_CLIENT: '0' };
  const replicas = await Promise.all(Array.from({ length: count }, () => startReplica(t, { ...common, ...env })));
  const redis = new Redis(REDIS_URL);
  t.after(() => redis.disconnect());
  const holderPid = async (name: string) => {
    const [key] = await redis.keys(`${prefix}lock:${name}`);
    return Number(key === undefined ? Number.NaN : (await redis.get(key))?.split(':')[0]);
  };
  return { replicas, holderPid };
}

export async function ibkrCluster(
  t: TestContext,
  count: number,
  options: { streaming: 'auto' | 'off'; sim?: IbkrSimulatorOptions },
): Promise<IbkrCluster> {
  const ibkr = await createIbkrSimulator(options.sim);
  await ibkr.listen();
  t.after(() => ibkr.close());
  const prefix = redisPrefix(t);
  const env = {
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    STATE_DIR: tempDir(t),
    BROKER: 'ibkr',
    IBKR_GATEWAY_URL: ibkr.baseUrl,
    OVERVIEW_SOURCE: 'none',
    STREAM_MAX_PER_CLIENT: '0',
    BROKER_STREAMING: options.streaming,
  };
  const replicas = await Promise.all(Array.from({ length: count }, () => startReplica(t, env)));
  const redis = new Redis(REDIS_URL);
  t.after(() => redis.disconnect());
  return { ibkr, replicas, holderPid: async (name) => Number((await redis.get(`${prefix}lock:${name}`))?.split(':')[0]) };
}
