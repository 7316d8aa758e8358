// POST /oauth/token answers {"access_token", "expires_in", "token_type"} at the top level (no envelope).
import { UnreadableAnswerError } from '../../core/errors.js';
import { toNumber, toText } from '../../broker/numbers.js';

export interface AccessToken {
  value: string;
  /** Lifetime in ms as the server stated it. */
  lifetimeMs: number;
}

/** Tastytrade's documented lifetime, used when the answer does not state one. */
const DEFAULT_TOKEN_LIFETIME_MS = 900_000;

export function parseToken(json: unknown): AccessToken {
  const body = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const value = toText(body.access_token);
  if (value === null) throw new UnreadableAnswerError('token', 'Tastytrade sent a token answer without an access token');
  const type = toText(body.token_type);
  if (type !== null && type.toLowerCase() !== 'bearer')
    throw new UnreadableAnswerError('token', 'Tastytrade sent a token of an unknown type');
  const seconds = toNumber(body.expires_in);
  return { value, lifetimeMs: seconds !== null && seconds > 0 ? seconds * 1000 : DEFAULT_TOKEN_LIFETIME_MS };
}
