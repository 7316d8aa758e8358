// The paging cursor this service hands out: base64url of the upstream cursor value plus the query it
// belongs to. It never holds an address, so a caller cannot make the service call anything but
// MASSIVE_URL; and it is bound to its symbol and limit, so it cannot be replayed against another query.
import { ApiError } from '../../errors.js';
import { UPSTREAM_CURSOR } from './parse-dividends.js';

export interface CursorState {
  /** Upper-cased ticker, or null for all tickers. */
  symbol: string | null;
  limit: number;
  /** The upstream's cursor value (from its next_url). */
  upstream: string;
}

export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,2048}$';
const VERSION = 1;

export function encodeCursor(state: CursorState): string {
  return Buffer.from(JSON.stringify({ v: VERSION, s: state.symbol, l: state.limit, c: state.upstream }), 'utf8').toString('base64url');
}

export function decodeCursor(text: string): CursorState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (parsed === null || typeof parsed !== 'object') throw invalid();
  const { v, s, l, c } = parsed as Record<string, unknown>;
  if (v !== VERSION) throw invalid();
  if (s !== null && (typeof s !== 'string' || !/^[A-Z0-9.^=-]{1,20}$/.test(s))) throw invalid();
  if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > 1000) throw invalid();
  if (typeof c !== 'string' || !UPSTREAM_CURSOR.test(c)) throw invalid();
  return { symbol: s, limit: l, upstream: c };
}

function invalid(): ApiError {
  return new ApiError('INVALID_PARAMETER', 'cursor is not valid: use the "next" link of a previous page');
}
