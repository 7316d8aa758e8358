// GET /api-quote-tokens -> {"data": {"token", "dxlink-url", "level"}, "context": "/api-quote-tokens"}: the
// DXLink token (documented to last 24 hours; the answer states no lifetime), the socket's address, and
// the data level the token streams, the one statement of how fresh the streamed quotes are.
import { UnreadableAnswerError } from '../../core/errors.js';
import type { Feed } from '../../core/freshness.js';
import { toText } from '../../broker/numbers.js';
import { parseData } from './parse-envelope.js';

export interface QuoteToken {
  token: string;
  /** wss://… of the DXLink endpoint the token is for. */
  url: string;
  /** "api" for real-time data; the sandbox environment answers "demo" (delayed). */
  level: string | null;
}

/**
 * The feed a token's level names: "api" real-time, "demo" delayed (the sandbox environment's, whose DXLink
 * address ends in /delayed); any other level, or none, says nothing (never taken for real-time).
 */
export function levelFeed(level: string | null): Feed | undefined {
  if (level === 'api') return 'realtime';
  if (level === 'demo') return 'delayed';
  return undefined;
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
