// Contract: every recorded Massive (Polygon.io) answer, read by the adapter's own parser. The parser is
// chosen by the recording's request; a recording no rule below can place fails with its name, so a new
// one is covered or noticed. Expected values come from the recorded body itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { MemoryBudgetGuard } from '../../src/budget/memory-budget-guard.js';
import { driftOf } from '../../src/core/errors.js';
import { CursorCodec } from '../../src/upstreams/massive/dividend-cursor.js';
import { DIVIDENDS_PATH, dividendsUrl, MassiveClient } from '../../src/upstreams/massive/massive-client.js';
import { classifyDividendsResponse, type MassiveResponse, saysKeyNotProvided } from '../../src/upstreams/massive/parse-dividends.js';
import { HttpClient } from '../../src/upstreams/http-client.js';
import { type Loaded, recording, recordings } from '../helpers/recorded.js';
import { startReplay } from '../helpers/replay-upstream.js';

interface RawPage {
  results: Record<string, unknown>[];
  next_url?: string;
}

interface RawError {
  status: string;
  request_id: string;
  error?: string;
  message?: string;
}

const responseOf = (r: Loaded): MassiveResponse => ({ status: r.status, headers: {}, json: r.json });

/** A dividends page: every record kept with exactly its fields, the cursor of next_url, no cursor without one. */
function checkPage(r: Loaded): void {
  const raw = r.json as RawPage;
  const ticker = r.request.query?.ticker;
  const classified = classifyDividendsResponse(responseOf(r), { ticker });
  assert.equal(classified.kind, 'data', classified.kind === 'error' ? classified.error.message : classified.kind);
  if (classified.kind !== 'data') return;
  // Records as sent: no `id` and no `currency` where the recording has none (2022), `currency` where it has one.
  assert.deepEqual(classified.page.results, raw.results);
  if (ticker !== undefined) assert.ok(raw.results.every((record) => record.ticker === ticker));
  const cursor = raw.next_url === undefined ? null : new URL(raw.next_url).searchParams.get('cursor');
  // A full page can come without next_url (the all-tickers page holds the default 10): then there is no next page.
  assert.equal(classified.page.nextCursor, cursor);
  if (cursor === null) return;
  // The real cursor (unpadded base64url) travels unchanged inside our own cursor and back into a request.
  const codec = new CursorCodec({ keys: [Buffer.alloc(32, 1)], context: 'contract', ttlMs: 60_000 });
  assert.equal(codec.decode(codec.encode({ symbol: ticker ?? null, limit: 1, upstream: cursor })).upstream, cursor);
  const next = dividendsUrl('http://127.0.0.1:9', { limit: 1, cursor });
  assert.equal(next.searchParams.get('cursor'), cursor);
  assert.equal(next.searchParams.has('apiKey'), false);
}

/** An error body: a refusal of the key or the plan, told by the body (the recorded statuses are uncertain), never drift. */
function checkError(r: Loaded): void {
  const raw = r.json as RawError;
  const text = raw.error ?? raw.message ?? '';
  const classified = classifyDividendsResponse(responseOf(r));
  assert.equal(classified.kind, 'error');
  if (classified.kind !== 'error') return;
  assert.equal(classified.error.code, 'UPSTREAM_ERROR');
  assert.equal(driftOf(classified.error), undefined, 'a refusal is an answer in the documented format, not drift');
  const told =
    raw.status === 'NOT_AUTHORIZED'
      ? /plan .* does not include/
      : /not provided/i.test(text)
        ? /no API key was sent/
        : /unknown or revoked/;
  assert.match(classified.error.message, told);
  assert.equal(saysKeyNotProvided(responseOf(r)), /not provided/i.test(text));
  // Nothing of the answer is repeated: not its request id, not the pricing URL the real 403 ends with.
  assert.ok(!classified.error.message.includes(raw.request_id));
  assert.doesNotMatch(classified.error.message, /https?:\/\//);
}

function placeOf(r: Loaded): ((r: Loaded) => void) | undefined {
  if (r.request.method !== 'GET') return undefined;
  if (r.request.path === DIVIDENDS_PATH && r.status === 200) return checkPage;
  // Error bodies share one envelope on every endpoint (the recorded 403 is from aggregates): the
  // dividends classifier is what would read the same body.
  if (r.status >= 400 && r.json !== null && typeof r.json === 'object' && typeof (r.json as RawError).status === 'string')
    return checkError;
  return undefined;
}

for (const r of recordings('massive')) {
  test(`recorded ${r.name} (${r.request.method} ${r.request.path} -> ${r.status}) reads as what it is`, () => {
    const check = placeOf(r);
    assert.ok(check !== undefined, `no contract check can place the recording "${r.name}": add one`);
    check(r);
  });
}

test('end to end over loopback: a key the server says it did not get (recorded as a 400) is sent as apiKey, and the page read', async (t) => {
  const refused = recording('massive', 'error-api-key-not-provided');
  const page = recording('massive', 'dividends-all-tickers-no-currency-no-id');
  // Both recorded without a query: the replay serves them in this order.
  const replay = await startReplay(t, 'massive', [refused, page]);
  const http = new HttpClient({ name: 'Massive', timeoutMs: 5_000, logger: pino({ level: 'silent' }) });
  t.after(() => http.close());
  const budget = new MemoryBudgetGuard('massive', { perMinute: 0, perDay: 0, minIntervalMs: 0 });
  const client = new MassiveClient({ url: replay.origin, apiKey: 'contract-key', http, budget });
  const read = await client.dividends({ limit: 10 });
  assert.deepEqual(replay.served, [refused.name, page.name]);
  assert.deepEqual(read.results, (page.json as RawPage).results);
  assert.equal(read.nextCursor, null);
  assert.deepEqual(replay.misses, []);
});
