// The paging cursor this service hands out: base64url of an HMAC-SHA256 tag followed by the JSON of the
// page it continues (symbol, limit, the upstream's cursor value, an expiry). The tag covers every field
// and the upstream it was minted for (mode and provider URL), so a caller can neither edit a cursor (a
// bigger limit, another ticker, parameters smuggled into the upstream cursor) nor replay one minted
// for another upstream or under another secret: such a cursor is refused before any upstream call.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../core/errors.js';
import { UPSTREAM_CURSOR } from './parse-dividends.js';

export interface CursorState {
  /** Upper-cased ticker, or null for all tickers. */
  symbol: string | null;
  limit: number;
  /** The upstream's cursor value (from its next_url). */
  upstream: string;
}

export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{44,4096}$';
const VERSION = 2;
const TAG_BYTES = 32;
const SYMBOL = /^[A-Z0-9.^=-]{1,20}$/;

export interface CursorCodecOptions {
  /** HMAC keys: the first signs, any verifies (a shared key and a local one minted before Redis answered). */
  keys: readonly Buffer[];
  /** What the cursor is bound to besides its fields: the data mode and the upstream's URL. */
  context: string;
  /** How long a cursor stays valid after it was minted. */
  ttlMs: number;
  now?: () => number;
}

export class CursorCodec {
  private readonly now: () => number;

  constructor(private readonly options: CursorCodecOptions) {
    if (options.keys.length === 0) throw new Error('a cursor codec needs at least one key');
    this.now = options.now ?? Date.now;
  }

  encode(state: CursorState): string {
    const payload = Buffer.from(
      JSON.stringify({ v: VERSION, s: state.symbol, l: state.limit, c: state.upstream, e: this.now() + this.options.ttlMs }),
      'utf8',
    );
    return Buffer.concat([this.tag(this.options.keys[0] as Buffer, payload), payload]).toString('base64url');
  }

  /** The state of an authentic, unexpired cursor; INVALID_PARAMETER for anything else. */
  decode(text: string): CursorState {
    const raw = Buffer.from(text, 'base64url');
    // Only the canonical spelling: base64 has spare bits, and an edited cursor must never pass as the same one.
    if (raw.length <= TAG_BYTES || raw.toString('base64url') !== text) throw invalid();
    const tag = raw.subarray(0, TAG_BYTES);
    const payload = raw.subarray(TAG_BYTES);
    if (!this.options.keys.some((key) => timingSafeEqual(tag, this.tag(key, payload)))) throw invalid();
    const state = parsePayload(payload);
    if (state.expiresAt <= this.now()) throw new ApiError('INVALID_PARAMETER', 'cursor has expired: start again from the first page');
    return { symbol: state.symbol, limit: state.limit, upstream: state.upstream };
  }

  private tag(key: Buffer, payload: Buffer): Buffer {
    return createHmac('sha256', key).update(`dividends-cursor\n${this.options.context}\n`).update(payload).digest();
  }
}

/** Authentic payloads are well formed; this guards against a key shared with something that is not this service. */
function parsePayload(payload: Buffer): CursorState & { expiresAt: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    throw invalid();
  }
  if (parsed === null || typeof parsed !== 'object') throw invalid();
  const { v, s, l, c, e } = parsed as Record<string, unknown>;
  if (v !== VERSION) throw invalid();
  if (s !== null && (typeof s !== 'string' || !SYMBOL.test(s))) throw invalid();
  if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > 1000) throw invalid();
  if (typeof c !== 'string' || !UPSTREAM_CURSOR.test(c)) throw invalid();
  if (typeof e !== 'number' || !Number.isFinite(e)) throw invalid();
  return { symbol: s, limit: l, upstream: c, expiresAt: e };
}

function invalid(): ApiError {
  return new ApiError('INVALID_PARAMETER', 'cursor is not valid: use the "next" link of a previous page');
}
