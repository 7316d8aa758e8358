// End to end: a dividends answer that no longer reads as the wire format says (a recorded page with one
// field renamed, as a provider's change would) is a 502 to the caller and is counted, by reason, in
// /api/system/status and in /metrics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedUpstream } from '../../src/sandbox/simulated-upstream.js';
import { startApp } from '../helpers/app.js';
import { recording } from '../helpers/recorded.js';

test('an unreadable dividends answer shows up as unreadable in the status and the metrics', async (t) => {
  const page = structuredClone(recording('massive', 'dividends-ewy-2022-01').json) as { results: Record<string, unknown>[] };
  const [first] = page.results as [Record<string, unknown>];
  first.exDividendDate = first.ex_dividend_date;
  delete first.ex_dividend_date;
  const massive = new SimulatedUpstream({ name: 'drifted-massive', handler: () => ({ status: 200, body: page }) });
  await massive.listen();
  t.after(() => massive.close());
  const { get, scrape } = await startApp(t, { configure: (c) => ({ ...c, massive: { ...c.massive, url: massive.origin } }) });

  const res = await get('/api/provider-b/dividends?symbol=EWY');
  assert.equal(res.status, 502);
  assert.equal(res.body.error.code, 'UPSTREAM_ERROR');

  const status = await get('/api/system/status');
  const dividends = status.body.upstreams.find((u: { id: string }) => u.id === 'provider-b');
  assert.deepEqual(dividends.unreadableAnswers.byReason, { 'dividend-record': 1 });
  assert.equal(dividends.unreadableAnswers.total, 1);
  assert.equal(dividends.unreadableAnswers.last.reason, 'dividend-record');
  assert.match(status.body.reason, /no longer read as expected \(dividend-record/);

  const metrics = await scrape();
  assert.match(metrics.text, /^mdp_upstream_unreadable_answers_total\{upstream="provider-b",reason="dividend-record"\} 1$/m);
});
