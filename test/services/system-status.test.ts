import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createDeps } from '../../src/deps.js';
import { REDIS_URL, redisPrefix } from '../store/redis-helper.js';
import { ApiError } from '../../src/core/errors.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import { buildSystemStatus, readStoreStatus } from '../../src/services/system-status.js';
import { buildApp } from '../../src/app.js';
import { startApp } from '../helpers/app.js';
import { NO_FALLBACK, testConfig, UNCAPPED } from '../helpers/config.js';
import { ALL_OF_THE_PRIVATE_SIDE, PRIVATE_SIDE_ENV, privateSideIn } from '../helpers/private-side.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const KNOWN = ['provider-a', 'provider-b', 'overview', 'broker'];

test('status reports version, mode, store and every known upstream before any call', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const res = await get('/api/system/status');
  assert.equal(res.status, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  const s = res.body;
  assert.equal(s.version, '1.0.0');
  assert.equal(s.mode, 'sandbox');
  assert.equal(s.status, 'ok');
  assert.ok(Number.isInteger(s.uptimeSeconds) && s.uptimeSeconds >= 0);
  assert.ok(!Number.isNaN(Date.parse(s.startedAt)));
  assert.equal(s.store.redisConfigured, false);
  assert.deepEqual(s.upstreams.map((u: { id: string }) => u.id).slice(0, 4), KNOWN);
  const a = s.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.equal(a.configured, true);
  assert.equal(a.state, 'idle');
  assert.equal(a.lastSuccessAt, null);
  assert.equal(a.lastError, null);
});

test('status shows the last error while provider A fails, and recovery after', async (t) => {
  const { get, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  sandbox.alphaVantage.setFaults({ fault: 'http5xx', status: 503 });
  const failed = await get('/api/provider-a/quote?symbol=IBM');
  assert.equal(failed.status, 502);

  const during = await get('/api/system/status');
  const a = during.body.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.equal(a.state, 'failing');
  assert.equal(a.lastError.code, 'UPSTREAM_ERROR');
  assert.ok(a.lastError.message.length > 0 && a.lastError.message.length <= 200);
  assert.equal(during.body.status, 'degraded');
  assert.match(during.body.reason, /Provider A/);
  // Never a key or the upstream's address.
  assert.ok(!during.text.includes(SANDBOX_CREDENTIALS.alphaVantageKey));
  assert.ok(!during.text.includes(sandbox.alphaVantage.origin));

  sandbox.alphaVantage.setFaults({ fault: null });
  const ok = await get('/api/provider-a/quote?symbol=MSFT');
  assert.equal(ok.status, 200);
  const after = await get('/api/system/status');
  const recovered = after.body.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.equal(recovered.state, 'ok');
  assert.ok(recovered.lastSuccessAt >= recovered.lastError.at, 'the success is newer than the kept last error');
  assert.equal(after.body.status, 'ok');
});

test('status shows provider A budget used and left, and its cache hit ratio', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '5', ALPHA_VANTAGE_CALLS_PER_DAY: '500' } });
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).status, 200);
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).headers['x-cache'], 'HIT');
  const a = (await get('/api/system/status')).body.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.equal(a.budget.limitMinute, 5);
  assert.equal(a.budget.limitDay, 500);
  assert.equal(a.budget.usedMinute, 1);
  assert.equal(a.budget.leftMinute, 4);
  assert.equal(a.budget.leftDay, 499);
  assert.deepEqual(a.cache, { hits: 1, misses: 1, stale: 0, hitRatio: 0.5 });
  assert.equal(a.calls, 1);
});

test("an outsider's status keeps the status, reasons, budgets and cache figures but shows no proxy, NO_PROXY, Redis node or broker; a local caller's shows them all, and no cache mixes the two", async (t) => {
  const token = 'status-token-0123456789abcdef';
  // Behind a proxy on loopback that TRUST_PROXY names: X-Forwarded-For plays the caller, over real sockets (the hot path's).
  const running = await startApp(t, {
    transport: 'socket',
    env: {
      ...ANSWERS_ENV,
      ...PRIVATE_SIDE_ENV,
      TRUST_PROXY: '127.0.0.1',
      BROKER_TOKEN: token,
      REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix(t),
    },
  });
  const outsider = { 'x-forwarded-for': '203.0.113.9' };
  assert.equal((await running.get('/api/provider-a/quote?symbol=IBM', outsider)).status, 200);
  const redisNode = new URL(REDIS_URL).host;
  // Local first, then the others, then local again: an answer kept anywhere would show.
  for (const [who, headers, local] of [
    ['loopback', {}, true],
    ['a public address', outsider, false],
    ['a page of another site on this machine', { origin: 'https://evil.example' }, false],
    ['a rebound name on this machine', { host: 'evil.example:3000' }, false],
    ['a public address with the token', { ...outsider, authorization: `Bearer ${token}` }, true],
    ['a public address with a wrong token', { ...outsider, authorization: `Bearer ${token}x` }, false],
    ['loopback again', {}, true],
  ] as const) {
    const res = await running.get('/api/system/status', headers);
    assert.equal(res.status, 200, `${who}: ${res.text}`);
    assert.equal(res.headers['cache-control'], 'no-store', who);
    assert.equal(res.headers.vary, 'Origin, Authorization', who);
    const s = res.body;
    assert.ok(['ok', 'degraded', 'down'].includes(s.status) && Array.isArray(s.reasons) && typeof s.reason === 'string', who);
    assert.equal(s.cache.lookups.miss >= 1, true, `${who}: the cache figures`);
    const a = s.upstreams.find((u: { id: string }) => u.id === 'provider-a');
    assert.equal(a.calls, 1, `${who}: provider A's row`);
    assert.ok(a.budget !== null && a.cache.misses === 1, `${who}: its budget and cache figures`);
    if (local) {
      assert.deepEqual(privateSideIn(res.text), ALL_OF_THE_PRIVATE_SIDE, who);
      assert.deepEqual(s.outboundProxy, {
        https: 'proxy.corp.internal:3128',
        http: null,
        noProxy: ['vault.corp.internal', '10.20.0.0/16'],
      });
      assert.equal(s.brokerStream.broker, 'ibkr');
      assert.equal(s.store.primary, redisNode, who);
    } else {
      assert.deepEqual(privateSideIn(res.text), [], `${who}: ${res.text}`);
      assert.deepEqual(
        s.upstreams.map((u: { id: string }) => u.id),
        ['provider-a', 'provider-b', 'overview'],
        who,
      );
      assert.ok(!res.text.includes(redisNode), `${who}: the Redis node`);
      assert.equal(s.store.kind, 'redis', `${who}: the store's kind and state stay`);
      assert.equal(s.store.redisReachable, true, who);
    }
  }
});

test('the public status is judged without the broker: a broker failure that names the proxy degrades the local view only', async (t) => {
  const deps = await createDeps(testConfig(t, { ...ANSWERS_ENV, ...PRIVATE_SIDE_ENV }), pino({ level: 'silent' }));
  t.after(() => deps.close());
  deps.health.recordSuccess('yahoo');
  deps.health.recordError(
    'ibkr',
    new ApiError('BROKER_UNAVAILABLE', 'the outbound proxy proxy.corp.internal:3128 (HTTPS_PROXY) refused the connection (HTTP 403)'),
  );
  const local = await buildSystemStatus({ deps, startedAt: new Date() }, 'local');
  assert.equal(local.status, 'degraded');
  assert.match(local.reason, /Broker \(ibkr\): last call failed \(BROKER_UNAVAILABLE\)/);
  const outsider = await buildSystemStatus({ deps, startedAt: new Date() }, 'public');
  assert.equal(outsider.status, 'ok');
  assert.deepEqual(outsider.reasons, []);
  assert.deepEqual(privateSideIn(JSON.stringify(outsider)), []);
});

test('system routes are never rate limited', async (t) => {
  const { get } = await startApp(t, { env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '2' } });
  for (let i = 0; i < 6; i++) {
    for (const path of ['/api/system/status', '/api/system/live', '/api/system/ready']) {
      assert.equal((await get(path)).status, 200, `${path} request ${i}`);
    }
  }
});

test('live and ready answer for orchestrators', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  assert.deepEqual((await get('/api/system/live')).body, { status: 'live' });
  const ready = await get('/api/system/ready');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready', checks: { config: true, store: true }, reason: null });
});

test('overall status is down when every configured upstream is failing', async (t) => {
  const config = testConfig(t, { ...ANSWERS_ENV, ALPHA_VANTAGE_API_KEY: 'k-123456', MASSIVE_API_KEY: 'm-123456' });
  const deps = await createDeps(config, pino({ level: 'silent' }));
  t.after(() => deps.close());
  // Names as the adapters record them; the catalogue maps them onto the four known upstreams.
  for (const name of ['alphaVantage', 'massive', 'yahoo', 'ibkr']) {
    deps.health.recordError(name, new ApiError('UPSTREAM_TIMEOUT', `${name} did not answer in time`));
  }
  const s = await buildSystemStatus({ deps, startedAt: new Date() }, 'local');
  assert.equal(s.status, 'down');
  assert.equal(s.reasons[0], 'no configured upstream is answering');
  assert.deepEqual(
    s.upstreams.map((u) => u.state),
    ['failing', 'failing', 'failing', 'failing'],
  );
  assert.equal(s.upstreams.length, 4, 'aliases fold into the catalogue instead of adding rows');

  deps.health.recordSuccess('yahoo');
  assert.equal((await buildSystemStatus({ deps, startedAt: new Date() }, 'local')).status, 'degraded');
});

test('an upstream name no catalogue entry claims still gets its own row', async (t) => {
  const deps = await createDeps(testConfig(t, ANSWERS_ENV), pino({ level: 'silent' }));
  t.after(() => deps.close());
  deps.health.recordSuccess('new-source');
  const s = await buildSystemStatus({ deps, startedAt: new Date() }, 'local');
  const row = s.upstreams.find((u) => u.id === 'new-source');
  assert.equal(row?.state, 'ok');
});

test('a spent budget makes the status degraded with the time it returns', async (t) => {
  const deps = await createDeps(testConfig(t, { ...ANSWERS_ENV, ALPHA_VANTAGE_API_KEY: 'k-123456' }), pino({ level: 'silent' }), {
    budgets: { alphaVantage: { perMinute: 1, perDay: 10, minIntervalMs: 0 } },
  });
  t.after(() => deps.close());
  const guard = deps.budgets.get('alphaVantage', { perMinute: 1, perDay: 10, minIntervalMs: 0 });
  await guard.acquire();
  const s = await buildSystemStatus({ deps, startedAt: new Date() }, 'local');
  const a = s.upstreams.find((u) => u.id === 'provider-a');
  assert.equal(a?.budget?.leftMinute, 0);
  assert.ok(a?.budget?.nextAvailableAt !== null);
  assert.equal(s.status, 'degraded');
  assert.match(s.reason, /budget spent until/);
});

test('a store that does not answer in time is reported as fallen back, not waited on', async (t) => {
  const deps = await createDeps(testConfig(t, { ...ANSWERS_ENV, REDIS_URL: 'redis://127.0.0.1:1' }), pino({ level: 'silent' }));
  t.after(() => deps.close());
  const hanging = Object.assign(deps, { store: { status: () => new Promise(() => {}) } });
  // Without the deadline this would never settle and the test would time out.
  const store = await readStoreStatus(hanging);
  assert.equal(store.kind, 'redis');
  assert.equal(store.redisReachable, false);
  assert.equal(store.fallback, true);
  assert.match(store.message ?? '', /did not report/);
});

test('a store report is read loosely: kind, reachability and fallback', async (t) => {
  const deps = await createDeps(testConfig(t, { ...ANSWERS_ENV, REDIS_URL }), pino({ level: 'silent' }));
  t.after(() => deps.close());
  const reporting = (report: unknown) => Object.assign(deps, { store: { status: async () => report } });
  assert.deepEqual(await readStoreStatus(reporting({ kind: 'redis', redis: { reachable: true } })), {
    kind: 'redis',
    redisConfigured: true,
    redisReachable: true,
    fallback: false,
    primary: null,
    failovers: null,
    settling: false,
    namedPrimary: null,
    rescues: null,
    lastRescue: null,
    message: null,
  });
  const rescue = { at: '2026-01-02T03:04:05.000Z', reason: 'the commands client had ended (ioredis would not reconnect it): replaced' };
  const failedOver = await readStoreStatus(
    reporting({
      kind: 'redis-sentinel',
      redisReachable: true,
      primary: '10.0.0.2:6379',
      failovers: 1,
      settling: true,
      namedPrimary: '10.0.0.2:6379',
      rescues: 1,
      lastRescue: rescue,
    }),
  );
  assert.deepEqual(
    [
      failedOver.kind,
      failedOver.primary,
      failedOver.failovers,
      failedOver.settling,
      failedOver.namedPrimary,
      failedOver.rescues,
      failedOver.lastRescue,
    ],
    ['redis-sentinel', '10.0.0.2:6379', 1, true, '10.0.0.2:6379', 1, rescue],
  );
  const lost = await readStoreStatus(reporting({ kind: 'embedded', redisReachable: false, message: 'Redis lost; using local state' }));
  assert.equal(lost.redisReachable, false);
  assert.equal(lost.fallback, true);
  assert.equal(lost.kind, 'embedded');
});

test('ready is 503 when Redis is configured, unreachable and nothing took over', async (t) => {
  const config = testConfig(t, { ...ANSWERS_ENV, REDIS_URL });
  const logger = pino({ level: 'silent' });
  const deps = Object.assign(await createDeps(config, logger), {
    store: { status: async () => ({ kind: 'redis', redisReachable: false, fallback: false, message: 'Redis is unreachable' }) },
  });
  const app = await buildApp(config, { logger, deps });
  t.after(() => app.close());
  const res = await app.inject('/api/system/ready');
  assert.equal(res.statusCode, 503);
  assert.deepEqual(res.json(), { status: 'not_ready', checks: { config: true, store: false }, reason: 'Redis is unreachable' });
  assert.equal((await app.inject('/api/system/live')).statusCode, 200, 'liveness does not depend on the store');
});
