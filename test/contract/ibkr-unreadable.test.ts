// End to end: IBKR gateway answers that no longer read as the wire format says are counted by reason in
// /api/system/status and /metrics, both the health check's (which never throws: its drift travels with
// the health it reports) and a data call's (which goes through the cache and its tracking).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedUpstream } from '../../src/sandbox/simulated-upstream.js';
import { startApp } from '../helpers/app.js';
import { recording } from '../helpers/recorded.js';

test('unreadable broker answers (auth status, account list) show up as unreadable in the status and the metrics', async (t) => {
  // The recorded 2023 status with "authenticated" renamed, and the recorded account list wrapped in an object.
  const { authenticated, ...status } = recording('ibkr', 'auth-status-authenticated-2023').json as Record<string, unknown>;
  const accounts = { accounts: recording('ibkr', 'portfolio-accounts-paper').json };
  const gateway = new SimulatedUpstream({
    name: 'drifted-ibkr',
    handler: (req) => {
      if (req.url.pathname === '/v1/api/iserver/auth/status') return { status: 200, body: { ...status, isAuthenticated: authenticated } };
      if (req.url.pathname === '/v1/api/portfolio/accounts') return { status: 200, body: accounts };
      return { status: 404, body: {} };
    },
  });
  await gateway.listen();
  t.after(() => gateway.close());
  const { get, scrape } = await startApp(t, {
    configure: (c) => ({ ...c, broker: { ...c.broker, kind: 'ibkr', ibkr: { ...c.broker.ibkr, url: `${gateway.origin}/v1/api` } } }),
  });

  const health = await get('/api/broker/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.status, 'disconnected');
  assert.equal('unreadable' in health.body, false, 'the drift is recorded, not shown to the caller');
  const list = await get('/api/broker/accounts');
  assert.equal(list.status, 502);

  const res = await get('/api/system/status');
  const broker = res.body.upstreams.find((u: { id: string }) => u.id === 'broker');
  assert.deepEqual(broker.unreadableAnswers.byReason, { 'auth-status': 1, accounts: 1 });
  assert.equal(broker.unreadableAnswers.total, 2);

  const metrics = (await scrape()).text;
  assert.match(metrics, /^mdp_upstream_unreadable_answers_total\{upstream="broker",reason="auth-status"\} 1$/m);
  assert.match(metrics, /^mdp_upstream_unreadable_answers_total\{upstream="broker",reason="accounts"\} 1$/m);
});
