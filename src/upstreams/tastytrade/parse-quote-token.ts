// GET /api-quote-tokens -> {"data": {"token", "dxlink-url", "level"}, "context": "/api-quote-tokens"}: the
// DXLink token (documented to last 24 hours; the answer states no lifetime) and the socket's address.
import { UnreadableAnswerError } from '../../core/errors.js';
import { toText } from '../../broker/numbers.js';
import { parseData } from './parse-envelope.js';

export interface QuoteToken {
  token: string;
  /** wss://… of the DXLink endpoint the token is for. */
  url: string;
  /** "api" for real-time data; the sandbox environment answers "demo" (delayed). */
  level: string | null;
}

/** Tastytrade's documented lifetime of a quote token. */
export const QUOTE_TOKEN_LIFETIME_MS = 24 * 3_600_000;

export function parseQuoteToken(json: unknown): QuoteToken {
  const data = parseData(json);
  const token = toText(data.token);
  const url = toText(data['dxlink-url']);
  if (token === null || url === null || !/^wss?:\/\//.test(url))
    throw new UnreadableAnswerError('quote-token', 'Tastytrade sent a quote token answer without a token or a DXLink address');
  return { token, url, level: toText(data.level) };
}
