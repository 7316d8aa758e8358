// Tastytrade wraps data as {"data": {...}, "context": "/path"} (market data adds "pagination": null) with
// lists in data.items, and reports errors as {"error": {"code", "message", "errors": [...]}} (the code may
// be a number; a nested code is the specific one) or, from the OAuth endpoint, {"error_code",
// "error_description"}.
import { UnreadableAnswerError } from '../../core/errors.js';
import { toText } from '../../broker/numbers.js';

function asObject(json: unknown): Record<string, unknown> | undefined {
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

export function parseData(json: unknown): Record<string, unknown> {
  const data = asObject(asObject(json)?.data);
  if (data === undefined) throw new UnreadableAnswerError('envelope', 'Tastytrade sent a body without a data object');
  return data;
}

/** `data.items`, each an object; anything else in the list is skipped. `list` names the drift reason. */
export function parseItems(json: unknown, list: string): Record<string, unknown>[] {
  const items = parseData(json).items;
  if (!Array.isArray(items)) throw new UnreadableAnswerError(list, `Tastytrade sent a ${list} answer without data.items`);
  return items.filter((item): item is Record<string, unknown> => asObject(item) !== undefined);
}

export interface TastytradeError {
  /** A machine code such as "invalid_grant", "token_invalid", "not_permitted"; null when none. */
  code: string | null;
  /**
   * The first nested code when it says more than `code`: a recorded order refusal is "preflight_check_failure"
   * outside and "gtc_market_orders_not_supported" inside.
   */
  specific: string | null;
}

/** The error codes of any Tastytrade error body; messages are not kept (they may echo request data). */
export function parseError(json: unknown): TastytradeError {
  const body = asObject(json);
  if (body === undefined) return { code: null, specific: null };
  const oauth = toText(body.error_code) ?? (typeof body.error === 'string' ? body.error : null);
  if (oauth !== null) return { code: oauth, specific: null };
  const error = asObject(body.error);
  if (error === undefined) return { code: null, specific: null };
  const nested = Array.isArray(error.errors) ? toText(asObject(error.errors[0])?.code) : null;
  const code = toText(error.code) ?? nested;
  return { code, specific: nested !== null && nested !== code ? nested : null };
}

/** "code" or "code: specific", for messages; empty when the body had no code. */
export function errorLabel(error: TastytradeError): string {
  if (error.code === null) return '';
  return error.specific === null ? error.code : `${error.code}: ${error.specific}`;
}
