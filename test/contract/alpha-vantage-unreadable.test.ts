// End to end: an answer the adapters cannot read is counted by its reason where operators look, in
// /metrics (mdp_upstream_unreadable_answers_total) and in /api/system/status (unreadableAnswers), while the
// caller gets a plain 502. Provider A's simulator sends an HTML page with status 200 (its html200 fault),
// Yahoo's a one-day chart without price (its quirks); neither is a refusal or a caller's mistake.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

/** The value of `name{labels}` in a Prometheus text page, labels in any order. */
function metric(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const have = new Set((match[2] as string).split(','));
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    if (wanted.length === have.size && wanted.every((w) => have.has(w))) return Number(match[3]);
  }
  return undefined;
}

test('an unreadable provider-A answer is counted by reason in /metrics and /api/system/status', async (t) => {
  const { get, scrape, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  sandbox.alphaVantage.setFaults({ fault: 'html200', remaining: 2 });
  for (const symbol of ['IBM', 'MSFT']) {
    const res = await get(`/api/provider-a/quote?symbol=${symbol}`);
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'UPSTREAM_ERROR');
  }
  assert.equal((await get('/api/provider-a/quote?symbol=KO')).status, 200, 'the fault is spent: a readable answer again');

  const status = (await get('/api/system/status')).body;
  const a = status.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.equal(a.unreadableAnswers.total, 2);
  assert.deepEqual(a.unreadableAnswers.byReason, { 'not-json': 2 });
  assert.equal(a.unreadableAnswers.last.reason, 'not-json');
  assert.match(a.unreadableAnswers.last.message, /not JSON/);
  assert.ok(!JSON.stringify(a).includes(sandbox.alphaVantage.origin), 'never the upstream address');

  const page = (await scrape()).text;
  assert.equal(metric(page, 'mdp_upstream_unreadable_answers_total', { upstream: 'provider-a', reason: 'not-json' }), 2);
});

test('an unreadable Yahoo chart (no price at all) is counted by reason in /metrics and /api/system/status', async (t) => {
  const { get, scrape, sandbox } = await startApp(t, { env: { ...ANSWERS_ENV, OVERVIEW_SYMBOLS: '^GSPC,GC=F' } });
  // No regularMarketPrice and the one daily bar still forming (null): nothing to read a price from.
  sandbox.yahoo.setQuirks({ omitMarketPrice: true, nullLastBar: true });
  const res = await get('/api/market/overview');
  assert.equal(res.status, 502, res.text);

  const overview = (await get('/api/system/status')).body.upstreams.find((u: { id: string }) => u.id === 'overview');
  assert.deepEqual(overview.unreadableAnswers.byReason, { 'chart-no-price': 2 });
  assert.equal(overview.unreadableAnswers.last.reason, 'chart-no-price');
  const page = (await scrape()).text;
  assert.equal(metric(page, 'mdp_upstream_unreadable_answers_total', { upstream: 'overview', reason: 'chart-no-price' }), 2);
});
