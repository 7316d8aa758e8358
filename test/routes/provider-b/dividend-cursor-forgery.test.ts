// Cursors handed out by the service cannot be forged: every edited, re-signed or rebound cursor is a 400
// INVALID_PARAMETER that costs no upstream call and no budget, and blames no upstream. A cursor of one
// replica is accepted by another (shared key through Redis, or the same CURSOR_SECRET).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { CursorCodec } from '../../../src/upstreams/massive/dividend-cursor.js';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { assertNoUpstreamBlamed } from '../../helpers/upstream-blame.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';

const PATH = '/v3/reference/dividends';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

interface Issued {
  symbol: string | null;
  limit: number;
  cursor: string;
}

async function issue(running: RunningApp, query: string): Promise<Issued> {
  const res = await running.get(`/api/provider-b/dividends?${query}`);
  assert.equal(res.status, 200, res.text);
  const next = new URL(res.body.next, 'http://x').searchParams;
  return { symbol: next.get('symbol'), limit: Number(next.get('limit')), cursor: next.get('cursor') as string };
}

function pathFor(issued: Issued, cursor: string, symbol = issued.symbol, limit: number | null = issued.limit): string {
  const params = new URLSearchParams();
  if (symbol !== null) params.set('symbol', symbol);
  if (limit !== null) params.set('limit', String(limit));
  params.set('cursor', cursor);
  return `/api/provider-b/dividends?${params}`;
}

/** One forgery of a real cursor, chosen by the generated numbers. */
function forge(issued: Issued, kind: number, at: number, mask: number): string {
  const text = issued.cursor;
  const raw = Buffer.from(text, 'base64url');
  const payload = JSON.parse(raw.subarray(32).toString('utf8')) as Record<string, unknown>;
  const withPayload = (edit: Record<string, unknown>) =>
    Buffer.concat([raw.subarray(0, 32), Buffer.from(JSON.stringify({ ...payload, ...edit }))]).toString('base64url');
  switch (kind) {
    case 0: {
      const flipped = Buffer.from(raw);
      flipped[at % raw.length] = (flipped[at % raw.length] as number) ^ mask;
      return pathFor(issued, flipped.toString('base64url'));
    }
    case 1: {
      const i = at % text.length;
      const other = ALPHABET[(ALPHABET.indexOf(text[i] as string) + 1 + (mask % 63)) % 64];
      return pathFor(issued, text.slice(0, i) + other + text.slice(i + 1));
    }
    case 2: {
      // The attacks of the audit: a bigger page, another ticker, another order, a longer life.
      const edits = [
        { l: 1000 },
        { s: 'MSFT' },
        { s: payload.s === null ? 'KO' : null },
        { c: Buffer.from('order=asc&offset=0').toString('base64') },
        { e: Date.now() + 1e12 },
      ];
      return pathFor(issued, withPayload(edits[at % edits.length] as Record<string, unknown>), null, null);
    }
    case 3: {
      // Well formed and signed, but with a key that is not the service's.
      const foreign = new CursorCodec({ keys: [randomBytes(32)], context: 'x', ttlMs: 60_000 });
      return pathFor(issued, foreign.encode({ symbol: issued.symbol, limit: 1000, upstream: payload.c as string }));
    }
    default:
      // An authentic cursor presented with another symbol or limit than it was minted for.
      return at % 2 === 0
        ? pathFor(issued, text, issued.symbol === 'PEP' ? 'KO' : 'PEP')
        : pathFor(issued, text, issued.symbol, issued.limit + 1);
  }
}

test('forged cursors: every one is a 400 with no upstream call, no budget spent and no upstream blamed', async (t) => {
  const running = await startApp(t, { env: { MASSIVE_CALLS_PER_MINUTE: '1000' } });
  const issued = [await issue(running, 'symbol=KO&limit=2'), await issue(running, 'symbol=aapl&limit=3'), await issue(running, 'limit=5')];
  const calls = running.sandbox.massive.count(PATH);
  const budget = running.app.deps.budgets.all().get('massive');
  assert.ok(budget !== undefined);
  const spent = (await budget.snapshot()).usedMinute;

  let tried = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(fc.nat(issued.length - 1), fc.nat(4), fc.nat(), fc.integer({ min: 1, max: 255 }), async (which, kind, at, mask) => {
      const path = forge(issued[which] as Issued, kind, at, mask);
      const res = await running.get(path);
      tried += 1;
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'INVALID_PARAMETER');
      refused += 1;
    }),
    { numRuns: 300 },
  );
  t.diagnostic(`cursor forgeries tried: ${tried}, refused: ${refused}`);

  assert.equal(running.sandbox.massive.count(PATH), calls, 'no forged cursor reached the upstream');
  assert.equal((await budget.snapshot()).usedMinute, spent, 'no forged cursor spent budget');
  await assertNoUpstreamBlamed(running);
  // The real cursors still work: the refusals above came from the forging, not from a broken codec.
  for (const one of issued) assert.equal((await running.get(pathFor(one, one.cursor))).status, 200);
});

test('a cursor of replica A is followed by replica B: one key shared through Redis', async (t) => {
  const env = { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) };
  const a = await startApp(t, { env });
  const b = await startApp(t, { env, configure: (c) => ({ ...c, massive: { ...c.massive, url: a.config.massive.url } }) });
  const issued = await issue(a, 'symbol=KO&limit=2');
  const onB = await b.get(pathFor(issued, issued.cursor));
  assert.equal(onB.status, 200, onB.text);
  const onA = await a.get(pathFor(issued, issued.cursor));
  assert.deepEqual(onB.body.results, onA.body.results);
  assert.ok(onB.body.results.every((r: { ticker: string }) => r.ticker === 'KO'));

  // Another deployment (another key prefix, so another key) refuses it.
  const other = await startApp(t, {
    env: { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) },
    configure: (c) => ({ ...c, massive: { ...c.massive, url: a.config.massive.url } }),
  });
  assert.equal((await other.get(pathFor(issued, issued.cursor))).status, 400);
});

test('CURSOR_SECRET: replicas with the same secret accept each other’s cursors, another secret refuses them', async (t) => {
  const secret = randomBytes(24).toString('base64');
  const a = await startApp(t, { env: { CURSOR_SECRET: secret } });
  const sameUpstream = (c: RunningApp['config']) => ({ ...c, massive: { ...c.massive, url: a.config.massive.url } });
  const b = await startApp(t, { env: { CURSOR_SECRET: secret }, configure: sameUpstream });
  const c = await startApp(t, { env: { CURSOR_SECRET: randomBytes(24).toString('base64') }, configure: sameUpstream });
  const issued = await issue(a, 'symbol=PEP&limit=3');
  assert.equal((await b.get(pathFor(issued, issued.cursor))).status, 200);
  const refused = await c.get(pathFor(issued, issued.cursor));
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.code, 'INVALID_PARAMETER');
});
