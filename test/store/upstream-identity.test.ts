import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/core/config.js';
import { createDeps } from '../../src/deps.js';
import { scopeOf, StateScopes, upstreamIdentities } from '../../src/store/upstream-identity.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';

const AV = { url: 'https://www.alphavantage.co/query', credentials: ['KEY-A-1234567890'] };
const LIMITS = { perMinute: 5, perDay: 500, minIntervalMs: 0 };

test('a live scope names the mode and upstream and hashes URL and credentials; the credential never appears', () => {
  const scope = scopeOf('live', 'alphaVantage', AV);
  assert.match(scope, /^live:alphaVantage@[0-9a-f]{16}$/);
  assert.equal(scopeOf('live', 'alphaVantage', { ...AV }), scope, 'the same identity gives the same scope (restarts, replicas)');
  assert.doesNotMatch(scope, /KEY-A|alphavantage\.co/);
  const others = [
    scopeOf('live', 'alphaVantage', { ...AV, credentials: ['KEY-B-1234567890'] }),
    scopeOf('live', 'alphaVantage', { ...AV, url: 'https://eu.example.test/query' }),
    scopeOf('live', 'alphaVantage', { ...AV, credentials: [undefined] }),
    scopeOf('live', 'massive', AV),
  ];
  assert.equal(new Set([scope, ...others]).size, 5, 'another key, URL, missing key or upstream is another scope');
});

test('credentials are kept apart: moving characters from one to the other is another identity', () => {
  const a = scopeOf('live', 'tastytrade', { url: 'https://t.test', credentials: ['ab', 'c'] });
  const b = scopeOf('live', 'tastytrade', { url: 'https://t.test', credentials: ['a', 'bc'] });
  assert.notEqual(a, b);
});

test('a sandbox scope ignores the simulators ephemeral URLs, and never equals a live scope', () => {
  const sandbox = scopeOf('sandbox', 'alphaVantage', { url: 'http://127.0.0.1:40001/query', credentials: ['sandbox-key'] });
  assert.equal(sandbox, 'sandbox:alphaVantage');
  assert.equal(scopeOf('sandbox', 'alphaVantage', { url: 'http://127.0.0.1:40999/query', credentials: ['sandbox-key'] }), sandbox);
  assert.notEqual(scopeOf('live', 'alphaVantage', { url: 'http://127.0.0.1:40001/query', credentials: ['sandbox-key'] }), sandbox);
});

test('every configured upstream has a scope; an unknown name is a programming error that says where to add it', () => {
  const config = loadConfig({
    DATA_MODE: 'live',
    ALPHA_VANTAGE_API_KEY: 'k',
    MASSIVE_API_KEY: 'm',
    TASTYTRADE_CLIENT_SECRET: 's',
    TASTYTRADE_REFRESH_TOKEN: 'r',
  });
  const scopes = StateScopes.fromConfig(config);
  for (const name of Object.keys(upstreamIdentities(config))) assert.match(scopes.of(name), new RegExp(`^live:${name}@[0-9a-f]{16}$`));
  assert.throws(() => scopes.of('nowhere'), /no upstream identity for "nowhere".*upstream-identity\.ts/);
});

// Two configurations on one store, as two starts on one STATE_DIR (or one Redis prefix) would be.
for (const store of ['embedded', 'redis'] as const) {
  test(`${store}: budget ledgers are per identity, and keep the provider name for messages and status`, async (t) => {
    const shared = store === 'redis' ? { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) } : { STATE_DIR: tempDir(t) };
    const open = async (env: Record<string, string>) => {
      const deps = await createDeps(loadConfig({ LOG_LEVEL: 'silent', ...shared, ...env }), pino({ level: 'silent' }));
      t.after(() => deps.close());
      return deps;
    };
    const first = await open({ DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-a' });
    const guard = first.budgets.get('alphaVantage', LIMITS);
    await guard.acquire();
    await guard.acquire();
    assert.equal(guard.name, 'alphaVantage');
    assert.equal((await guard.snapshot()).usedDay, 2);

    const again = await open({ DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-a' });
    assert.equal((await again.budgets.get('alphaVantage', LIMITS).snapshot()).usedDay, 2, 'the same identity finds its ledger');
    const otherIdentities: Record<string, string>[] = [
      { DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-b' },
      { DATA_MODE: 'live', ALPHA_VANTAGE_API_KEY: 'key-a', ALPHA_VANTAGE_URL: 'https://other.example.test/query' },
      { DATA_MODE: 'sandbox' },
    ];
    for (const env of otherIdentities) {
      const other = await open(env);
      const ledger = other.budgets.get('alphaVantage', LIMITS);
      assert.equal((await ledger.snapshot()).usedDay, 0, `a fresh ledger for ${JSON.stringify(env)}`);
      await ledger.backOff(60_000);
      assert.equal((await guard.snapshot()).backedOffUntil, null, 'a back-off stays with its own identity');
    }
  });
}
