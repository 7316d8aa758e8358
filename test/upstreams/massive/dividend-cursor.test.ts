import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../../src/core/errors.js';
import { CURSOR_PATTERN, CursorCodec, type CursorState } from '../../../src/upstreams/massive/dividend-cursor.js';
import { dividendsUrl } from '../../../src/upstreams/massive/massive-client.js';

const KEY = randomBytes(32);
const clock = { t: 1_700_000_000_000 };
const codec = (keys: Buffer[] = [KEY], context = 'sandbox|http://127.0.0.1:9') =>
  new CursorCodec({ keys, context, ttlMs: 60_000, now: () => clock.t });
const STATE: CursorState = { symbol: 'BRK.B', limit: 250, upstream: 'dGlja2VyPUJSSy5C+/==' };

function refused(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    assert.ok(error instanceof ApiError && error.code === 'INVALID_PARAMETER', String(error));
    return true;
  }
}

/** The cursor's tag and payload, to forge from. */
function split(text: string): { tag: Buffer; payload: Record<string, unknown> } {
  const raw = Buffer.from(text, 'base64url');
  return { tag: raw.subarray(0, 32), payload: JSON.parse(raw.subarray(32).toString('utf8')) };
}
const join = (tag: Buffer, payload: unknown) => Buffer.concat([tag, Buffer.from(JSON.stringify(payload))]).toString('base64url');

describe('dividend cursor', () => {
  it('round-trips symbol, limit and the upstream cursor, and matches its own pattern', () => {
    const c = codec();
    const text = c.encode(STATE);
    assert.match(text, new RegExp(CURSOR_PATTERN));
    assert.deepEqual(c.decode(text), STATE);
    assert.deepEqual(c.decode(c.encode({ symbol: null, limit: 1, upstream: 'x' })), { symbol: null, limit: 1, upstream: 'x' });
  });

  it('refuses every edited field, even a well-formed one, while the tag is kept', () => {
    const c = codec();
    const { tag, payload } = split(c.encode(STATE));
    const edits = [{ l: 1000 }, { s: 'MSFT' }, { s: null }, { c: 'b3JkZXI9YXNj' }, { e: (payload.e as number) + 1e9 }, { v: 1 }];
    for (const edit of edits)
      assert.ok(
        refused(() => c.decode(join(tag, { ...payload, ...edit }))),
        JSON.stringify(edit),
      );
    // An unsigned cursor (the v1 shape, without a signature) is refused: only a signed one is this service's.
    const v1 = Buffer.from(JSON.stringify({ v: 1, s: 'KO', l: 1000, c: 'eA' })).toString('base64url');
    assert.ok(refused(() => c.decode(v1)));
  });

  it('refuses a cursor signed with another key or for another upstream, and accepts any key of its ring', () => {
    const text = codec().encode(STATE);
    assert.ok(refused(() => codec([randomBytes(32)]).decode(text)));
    assert.ok(refused(() => codec([KEY], 'live|https://api.massive.com').decode(text)));
    assert.deepEqual(codec([randomBytes(32), KEY]).decode(text), STATE);
  });

  it('expires', () => {
    const c = codec();
    const text = c.encode(STATE);
    clock.t += 59_999;
    assert.deepEqual(c.decode(text), STATE);
    clock.t += 1;
    assert.throws(() => c.decode(text), /expired/);
  });

  it('property: any flipped byte, changed character, cut or extension of a real cursor is refused', () => {
    const c = codec();
    const states = fc.record({
      symbol: fc.option(fc.stringMatching(/^[A-Z0-9.^=-]{1,20}$/), { nil: null }),
      limit: fc.integer({ min: 1, max: 1000 }),
      upstream: fc.stringMatching(/^[A-Za-z0-9+/=_.~-]{1,200}$/),
    });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let tried = 0;
    fc.assert(
      fc.property(states, fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat(63), (state, at, mask, char) => {
        const text = c.encode(state);
        const raw = Buffer.from(text, 'base64url');
        const flipped = Buffer.from(raw);
        flipped[at % raw.length] = (flipped[at % raw.length] as number) ^ mask;
        const i = at % text.length;
        const replaced = text.slice(0, i) + alphabet[(alphabet.indexOf(text[i] as string) + 1 + (char % 63)) % 64] + text.slice(i + 1);
        const forgeries = [flipped.toString('base64url'), replaced, text.slice(0, i), `${text}${alphabet[char]}`];
        tried += forgeries.length;
        for (const forged of forgeries)
          assert.ok(
            refused(() => c.decode(forged)),
            forged,
          );
      }),
      { numRuns: 500 },
    );
    assert.equal(tried, 2_000);
  });

  it('is rebuilt into a URL on the configured host only, with the cursor encoded', () => {
    const url = dividendsUrl('http://127.0.0.1:9/base/', { limit: 10, cursor: 'a+b/c=' });
    assert.equal(url.origin, 'http://127.0.0.1:9');
    assert.equal(url.pathname, '/base/v3/reference/dividends');
    assert.equal(url.search, '?cursor=a%2Bb%2Fc%3D');
    const first = dividendsUrl('http://h', { ticker: 'BRK.B', limit: 100 });
    assert.equal(first.search, '?ticker=BRK.B&limit=100&order=desc&sort=ex_dividend_date');
    assert.doesNotMatch(first.href, /apiKey/i);
  });
});
