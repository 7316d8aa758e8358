// A parameter's value as Alpha Vantage reads it, for every reader of the drop-in and the REST routes alike:
// the service's one text rule (core/parameter-text.ts: trimmed, invisible characters refused), then the
// letter case the value is documented in, so that every spelling of one call is one cache entry and one
// upstream call.
import { ApiError } from '../../core/errors.js';
import { parameterText } from '../../core/parameter-text.js';

/**
 * Symbols, currencies and tickers are documented in upper case and read by Alpha Vantage in any case. Intervals,
 * series types and output sizes are documented in lower case only: Alpha Vantage answers another spelling with
 * its invalid-call message (the sandbox does; nothing recorded says otherwise), so `MONTHLY` can only mean
 * `monthly`, and is sent so. Every other value is sent in the caller's case: free text (`topics`, `keywords`)
 * and values documented in mixed case (`INTERVAL=DAILY` or `1min` for the analytics functions) may mean
 * something else in another case, so another spelling stays another call. Search keywords are matched in any
 * case upstream, and their cache key says so (services/cache-keys.ts).
 */
const UPPER_CASE = new Set(['symbol', 'from_currency', 'to_currency', 'from_symbol', 'to_symbol', 'market', 'tickers', 'SYMBOLS']);
const LOWER_CASE = new Set(['interval', 'series_type', 'outputsize']);

/**
 * A parameter's single value as Alpha Vantage reads it, or undefined when it is absent: trimmed, refused
 * characters refused, in the letter case Alpha Vantage documents it in.
 */
export function given(raw: unknown, name: string): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new ApiError('INVALID_PARAMETER', `${name} must be a single value`);
  const text = parameterText(name, raw);
  if (UPPER_CASE.has(name)) return text.toUpperCase();
  return LOWER_CASE.has(name) ? text.toLowerCase() : text;
}
