// REDIS_URL=rediss://… with a password, the way managed services are reached: a redis-server speaking TLS
// (certificates made by the test), its CA trusted through NODE_EXTRA_CA_CERTS. Two service processes share
// the cache and the provider budget over it; a wrong password or an untrusted certificate stops the real
// entry point at start with one clear line that never shows the password.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { tempDir } from '../helpers/config.js';
import { ask, startCountingUpstream, startReplica, upstreamEnv } from '../economy/replicas.js';
import { RedisStandalone } from './redis-topology.js';

const PASSWORD = 'tls-test-password-4b1d';

test('over rediss:// with a password, replicas share the cache and the budget; a wrong password or CA stops the start', async (t) => {
  const redis = await RedisStandalone.startTls(['--requirepass', PASSWORD]);
  t.after(() => redis.stop());
  const tls = redis.tls as { port: number; caFile: string };
  const urlWith = (password: string) => `rediss://:${password}@localhost:${tls.port}`;

  const upstream = await startCountingUpstream(t);
  const env = {
    ...upstreamEnv(upstream),
    REDIS_URL: urlWith(PASSWORD),
    REDIS_KEY_PREFIX: 'mdp-tls:',
    NODE_EXTRA_CA_CERTS: tls.caFile,
    STATE_DIR: tempDir(t),
  };
  const [a, b] = await Promise.all([startReplica(t, env), startReplica(t, env)]);
  const status = (await (await request(`${a.url}/api/system/status`)).body.json()) as { store: { kind: string; redisReachable: boolean } };
  assert.deepEqual([status.store.kind, status.store.redisReachable], ['redis', true]);

  assert.equal((await ask(`${a.url}/api/provider-a/quote?symbol=AAPL`)).status, 200);
  assert.equal((await ask(`${b.url}/api/provider-a/quote?symbol=AAPL`)).status, 200);
  assert.equal(upstream.calls.length, 1, 'the second replica answered from the cache shared over TLS');

  const client = new Redis(urlWith(PASSWORD), { tls: { ca: readFileSync(tls.caFile) } });
  try {
    const keys = await client.keys('mdp-tls:*');
    assert.ok(
      keys.some((k) => k.startsWith('mdp-tls:cache:')),
      keys.join(' '),
    );
    const ledger = keys.find((k) => /^mdp-tls:\{budget:live:alphaVantage@\w+\}:calls$/.test(k));
    assert.ok(ledger !== undefined, keys.join(' '));
    assert.equal(await client.zcard(ledger), 1, 'the provider call is in the shared ledger');
  } finally {
    client.disconnect();
  }

  const wrong = 'not-the-password-77c2';
  const refused = await startFailure({ REDIS_URL: urlWith(wrong), NODE_EXTRA_CA_CERTS: tls.caFile, STATE_DIR: tempDir(t) });
  assert.equal(refused.code, 1);
  assert.match(refused.output, /failed to start: .*Redis refused the credentials \(WRONGPASS\): check the user and password in REDIS_URL/);
  assert.ok(!refused.output.includes(wrong), refused.output);

  const untrusted = await startFailure({ REDIS_URL: urlWith(PASSWORD), STATE_DIR: tempDir(t) });
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.output, /failed to start: .*Redis's TLS certificate is not trusted \(\w+\)/);
  assert.ok(!untrusted.output.includes(PASSWORD), untrusted.output);
});

/** The real entry point (sandbox mode), expected to exit: its exit code and everything it printed. */
async function startFailure(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, PORT: '0', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}
