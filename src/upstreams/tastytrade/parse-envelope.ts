// Tastytrade wraps data as {"data": {...}, "context": "/path"} with lists in data.items, and reports
// errors as {"error": {"code", "message", "errors": [...]}} (the code may be a number) or, from the OAuth
// endpoint, {"error_code", "error_description"}.
import { ApiError } from '../../errors.js';
import { toText } from '../../broker/numbers.js';

function asObject(json: unknown): Record<string, unknown> | undefined {
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

export function parseData(json: unknown): Record<string, unknown> {
  const data = asObject(asObject(json)?.data);
  if (data === undefined) throw new ApiError('UPSTREAM_ERROR', 'Tastytrade sent a body without a data object');
  return data;
}

/** `data.items`, each an object; anything else in the list is skipped. */
export function parseItems(json: unknown): Record<string, unknown>[] {
  const items = parseData(json).items;
  if (!Array.isArray(items)) throw new ApiError('UPSTREAM_ERROR', 'Tastytrade sent a list without data.items');
  return items.filter((item): item is Record<string, unknown> => asObject(item) !== undefined);
}

export interface TastytradeError {
  /** A machine code such as "invalid_grant", "token_invalid", "not_permitted"; null when none. */
  code: string | null;
}

/** The error code of any Tastytrade error body; messages are not kept (they may echo request data). */
export function parseError(json: unknown): TastytradeError {
  const body = asObject(json);
  if (body === undefined) return { code: null };
  const oauth = toText(body.error_code) ?? (typeof body.error === 'string' ? body.error : null);
  if (oauth !== null) return { code: oauth };
  const error = asObject(body.error);
  if (error === undefined) return { code: null };
  const nested = Array.isArray(error.errors) ? asObject(error.errors[0]) : undefined;
  return { code: toText(error.code) ?? toText(nested?.code) };
}
