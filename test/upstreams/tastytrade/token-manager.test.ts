import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { createTastytradeSimulator, type TastytradeSimulator } from '../../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { HttpClient } from '../../../src/upstreams/http-client.js';
import { TokenManager, TokenRefusedError } from '../../../src/upstreams/tastytrade/token-manager.js';

const SECRET = 'client-secret-for-test';
const REFRESH = 'refresh-token-for-test';

async function setup(
  t: TestContext,
  refreshToken = REFRESH,
): Promise<{ sim: TastytradeSimulator; tokens: TokenManager; clock: { t: number } }> {
  const sim = createTastytradeSimulator({ clientSecret: SECRET, refreshToken: REFRESH });
  await sim.listen();
  t.after(() => sim.close());
  const http = new HttpClient({ name: 'Tastytrade', timeoutMs: 5_000, logger: pino({ level: 'silent' }) });
  t.after(() => http.close());
  const clock = { t: 1_000_000 };
  const tokens = new TokenManager({ url: sim.origin, clientSecret: SECRET, refreshToken, http, userAgent: 'test/1.0', now: () => clock.t });
  return { sim, tokens, clock };
}

test('the token is reused until shortly before its 15 minutes end, then refreshed ahead of expiry', async (t) => {
  const { sim, tokens, clock } = await setup(t);
  const first = await tokens.accessToken();
  clock.t += 800_000;
  assert.equal(await tokens.accessToken(), first);
  assert.equal(sim.count('/oauth/token'), 1);
  clock.t += 50_000; // 850 s: inside the 60 s margin before the 900 s expiry
  const second = await tokens.accessToken();
  assert.notEqual(second, first);
  assert.equal(sim.count('/oauth/token'), 2);
});

test('one refresh in flight at a time', async (t) => {
  const { sim, tokens } = await setup(t);
  const all = await Promise.all(Array.from({ length: 20 }, () => tokens.accessToken()));
  assert.equal(new Set(all).size, 1);
  assert.equal(sim.count('/oauth/token'), 1);
});

test('after a 401 the rejected token is replaced once; a caller holding an already replaced token gets the new one without a refresh', async (t) => {
  const { sim, tokens } = await setup(t);
  const old = await tokens.accessToken();
  const [a, b] = await Promise.all([tokens.afterRejected(old), tokens.afterRejected(old)]);
  assert.equal(a, b);
  assert.notEqual(a, old);
  assert.equal(await tokens.afterRejected(old), a);
  assert.equal(sim.count('/oauth/token'), 2);
});

test('a refused refresh token is not sent again during the cool-down', async (t) => {
  const { sim, tokens, clock } = await setup(t, 'wrong');
  await assert.rejects(
    tokens.accessToken(),
    (e: unknown) => e instanceof TokenRefusedError && /invalid_grant/.test(e.message) && !e.message.includes('wrong'),
  );
  await assert.rejects(tokens.accessToken(), TokenRefusedError);
  assert.equal(sim.count('/oauth/token'), 1);
  clock.t += 301_000;
  await assert.rejects(tokens.accessToken(), TokenRefusedError);
  assert.equal(sim.count('/oauth/token'), 2);
});
