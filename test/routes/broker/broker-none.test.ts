import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';

test('BROKER=none: health reports not_configured with 200; data endpoints answer 503 PROVIDER_NOT_CONFIGURED', async (t) => {
  const { get, sandbox } = await startApp(t, { env: { BROKER: 'none' } });
  const health = await get('/api/broker/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.broker, 'none');
  assert.equal(health.body.status, 'not_configured');
  assert.equal(health.body.connected, false);
  assert.match(health.body.message, /BROKER/);
  for (const path of ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes?symbols=AAPL']) {
    const res = await get(path);
    assert.equal(res.status, 503, path);
    assert.equal(res.body.error.code, 'PROVIDER_NOT_CONFIGURED', path);
  }
  assert.equal(sandbox.ibkr.count() + sandbox.tastytrade.count(), 0, 'no broker was called');
});

test('BROKER=tastytrade without credentials (live mode): not_configured, nothing called', async (t) => {
  const { get, sandbox } = await startApp(t, {
    env: { BROKER: 'tastytrade', DATA_MODE: 'live' },
    configure: (c) => ({
      ...c,
      broker: { ...c.broker, tastytrade: { ...c.broker.tastytrade, clientSecret: undefined, refreshToken: undefined } },
    }),
  });
  const health = await get('/api/broker/health');
  assert.equal(health.body.status, 'not_configured');
  assert.match(health.body.message, /TASTYTRADE_REFRESH_TOKEN/);
  const res = await get('/api/broker/positions');
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'PROVIDER_NOT_CONFIGURED');
  assert.equal(sandbox.tastytrade.count(), 0);
});
