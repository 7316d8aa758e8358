// Three service processes on a Cluster of three primaries, each with a replica; a primary killed (SIGKILL)
// while requests run (failover-under-load.ts): the Cluster promotes its replica and every service replica
// follows, with the provider's limit held throughout.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, setGlobalDispatcher } from 'undici';
import { RedisCluster, type RedisNode } from '../store/redis-topology.js';
import { failoverUnderLoad } from './failover-under-load.js';

setGlobalDispatcher(new Agent({ connections: 100, pipelining: 1 }));

test('a Cluster primary killed under load: its replica promoted, no provider limit broken, only JSON 503s, every replica on the new primaries', async (t) => {
  const cluster = await RedisCluster.start(3, 1);
  t.after(() => cluster.stop());
  let lost: RedisNode | undefined;
  await failoverUnderLoad(t, {
    kind: 'redis-cluster',
    redisEnv: { REDIS_CLUSTER_NODES: cluster.seeds },
    // The primary holding provider A's budget ledger: its loss is the one the budget must survive.
    fail: async () => {
      lost = await cluster.primaryHolding('mdp-test:{budget:*}:calls');
      assert.ok(lost !== undefined, 'the ledger is in the Cluster');
      await cluster.kill(lost);
    },
    primaryAfter: async () => {
      const now = await cluster.primaries();
      return now.length === 3 && !now.includes(`127.0.0.1:${lost?.port}`) ? now.join(',') : 'not yet promoted';
    },
  });
});
