// Cache headers read by an RFC 9111 cache we did not write (http-cache-semantics, as used by got, make-fetch-happen
// and others): it must count the entry's age once, and see the same stale windows the service itself applies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import CachePolicy from 'http-cache-semantics';
import type { CacheEntry } from '../../../src/cache/cache-store.js';
import { ALPHA_VANTAGE } from '../../../src/core/upstream-ids.js';
import { startApp, type TestResponse } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const QUOTE = '/api/provider-a/quote';

function policyOf(path: string, res: TestResponse): CachePolicy {
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  return new CachePolicy({ url: path, method: 'GET', headers: {} }, { status: res.status, headers }, { shared: true });
}

/** Seconds a cache may still serve the answer without asking (fresh), and with the stale directives. */
function remaining(policy: CachePolicy): { fresh: number; staleIfError: number } {
  const { 'stale-if-error': sie } = parseDirectives(policy.responseHeaders()['cache-control']);
  const fresh = policy.maxAge() - policy.age();
  return { fresh, staleIfError: fresh + Number(sie) };
}

function parseDirectives(header: unknown): Record<string, string> {
  return Object.fromEntries(
    String(header)
      .split(',')
      .map((d) => d.trim().split('=') as [string, string]),
  );
}

test('an RFC 9111 cache counts the age once: Age 19 of a 60 s window leaves 41 s fresh, on both answer paths', async (t) => {
  const { get, app } = await startApp(t, { env: ANSWERS_ENV, transport: 'socket' });
  assert.equal((await get(`${QUOTE}?symbol=IBM`)).status, 200);
  const key = `${app.deps.scopes.of(ALPHA_VANTAGE)}:quote:IBM`;
  const stored = app.deps.cache.store.getSync(key)!;
  const now = Date.now();
  const window = stored.freshUntil - stored.storedAt;
  assert.equal(window, 60_000, 'the default quote window');
  const aged: CacheEntry = { ...stored, storedAt: now - 19_000, freshUntil: now + 41_000, staleUntil: now + 41_000 + 86_400_000 };
  await app.deps.cache.store.set(key, aged);

  const served = app.hotPath.served;
  // Another spelling of the same key goes through the pipeline, then its repeat through the hot path.
  for (const path of [`${QUOTE}?symbol=ibm`, `${QUOTE}?symbol=ibm`]) {
    const res = await get(path);
    assert.equal(res.headers['x-cache'], 'HIT');
    assert.equal(res.headers.age, '19');
    assert.equal(res.headers['cache-control'], 'public, max-age=60, stale-while-revalidate=86400, stale-if-error=86400');
    const policy = policyOf(path, res);
    assert.equal(policy.stale(), false);
    const left = remaining(policy);
    assert.ok(Math.abs(left.fresh - 41) < 1.5, `fresh for ${left.fresh} s, not 41`);
    assert.ok(Math.abs(left.staleIfError - (41 + 86_400)) < 1.5, `usable on error for ${left.staleIfError} s`);
    assert.ok(Math.abs(policy.timeToLive() / 1000 - (41 + 86_400)) < 1.5, 'time to live is the service own stale deadline');
  }
  assert.equal(app.hotPath.served, served + 1, 'the second answer came from the hot path');
});

test('a stale answer is stale to an RFC 9111 cache, usable while revalidating or on error until the service stops serving it', async (t) => {
  const { get, app } = await startApp(t, { env: ANSWERS_ENV, transport: 'socket' });
  assert.equal((await get(`${QUOTE}?symbol=KO`)).status, 200);
  const key = `${app.deps.scopes.of(ALPHA_VANTAGE)}:quote:KO`;
  const stored = app.deps.cache.store.getSync(key)!;
  const now = Date.now();
  // 70 s old with a 60 s fresh window and a 100 s stale window: 90 s of stale use left.
  await app.deps.cache.store.set(key, { ...stored, storedAt: now - 70_000, freshUntil: now - 10_000, staleUntil: now + 90_000 });
  // Another spelling: the hot path still holds the first answer for the first one.
  const res = await get(`${QUOTE}?symbol=ko`);
  assert.equal(res.headers['x-cache'], 'STALE');
  assert.equal(res.headers.age, '70');
  const policy = policyOf(`${QUOTE}?symbol=ko`, res);
  assert.equal(policy.stale(), true);
  assert.ok(Math.abs(remaining(policy).staleIfError - 90) < 1.5, `usable on error for ${remaining(policy).staleIfError} s, not 90`);
  assert.ok(Math.abs(policy.timeToLive() / 1000 - 90) < 1.5, `usable for ${policy.timeToLive() / 1000} s, not 90`);
});
