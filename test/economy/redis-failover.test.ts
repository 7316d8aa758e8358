// Three service processes on a primary, a replica and three Sentinels; the primary killed (SIGKILL) while
// requests run (failover-under-load.ts). One replica in seven used to stay on the dead primary for good
// (issue 38): `npx tsx bench/failover-repeat.ts` runs this file thirty times and prints the tally.
import { test } from 'node:test';
import { Agent, setGlobalDispatcher } from 'undici';
import { RedisSentinelGroup } from '../store/redis-topology.js';
import { failoverUnderLoad } from './failover-under-load.js';

setGlobalDispatcher(new Agent({ connections: 100, pipelining: 1 }));

test('the Sentinel primary killed under load: no provider limit broken, only JSON 503s, every replica back on the new primary', async (t) => {
  const group = await RedisSentinelGroup.start();
  t.after(() => group.stop());
  await failoverUnderLoad(t, {
    kind: 'redis-sentinel',
    redisEnv: { REDIS_SENTINELS: group.sentinelAddresses, REDIS_SENTINEL_NAME: RedisSentinelGroup.NAME },
    fail: () => group.kill(group.primary),
    primaryAfter: async () => `127.0.0.1:${group.replica.port}`,
  });
});
