// `symbols=A,b,A` -> ["A", "B"]: trimmed, upper-cased, de-duplicated and sorted (the sorted list is the
// cache key, so any order of the same symbols shares one entry and one upstream call). The list is read by
// the one text rule first (parameter-text.ts), so each symbol is trimmed of spaces only.
import { ApiError } from './errors.js';
import { echoed, parameterText } from './parameter-text.js';

export const MAX_SYMBOLS = 50;

/** Letters, digits and the punctuation tickers use (`BRK.B`, `^GSPC`, `GC=F`, `BTC-USD`). */
export const SYMBOL_PATTERN = '^[A-Za-z0-9.^=-]{1,20}$';
const SYMBOL = new RegExp(SYMBOL_PATTERN);

/** `name` is the parameter the list came in, for the messages. */
export function parseSymbolList(raw: string, name = 'symbols'): string[] {
  const parts = parameterText(name, raw)
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new ApiError('MISSING_PARAMETER', `${name} is required: a comma-separated list such as AAPL,MSFT`);
  const bad = parts.find((part) => !SYMBOL.test(part));
  if (bad !== undefined) {
    throw new ApiError(
      'INVALID_PARAMETER',
      `${name}: "${echoed(bad)}" is not a valid symbol (letters, digits, ".", "-", "^", "=", at most 20 characters)`,
    );
  }
  const distinct = [...new Set(parts.map((part) => part.toUpperCase()))].sort();
  if (distinct.length > MAX_SYMBOLS) {
    throw new ApiError('INVALID_PARAMETER', `${name}: at most ${MAX_SYMBOLS} symbols per request (got ${distinct.length})`);
  }
  return distinct;
}
