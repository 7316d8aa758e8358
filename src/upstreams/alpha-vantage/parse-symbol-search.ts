// SYMBOL_SEARCH: `{ "bestMatches": [nine string fields each] }`; no match is an empty list, not an error.
// Fields are passed on as sent; unknown extra fields are dropped so the documented shape holds.
import { UnreadableAnswerError } from '../../core/errors.js';
import { MATCH_FIELDS, type SymbolMatch, type SymbolSearchBody } from '../../wire/alpha-vantage/bodies.js';
import { parseDecimal } from '../../wire/alpha-vantage/decimal.js';

/** Takes a body already classified as data. */
export function parseSymbolSearch(body: Record<string, unknown>): SymbolSearchBody {
  const matches = body.bestMatches;
  if (!Array.isArray(matches)) throw new UnreadableAnswerError('no-best-matches', 'Alpha Vantage sent a search body without "bestMatches"');
  return { bestMatches: matches.map(parseMatch) };
}

function parseMatch(raw: unknown, index: number): SymbolMatch {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw malformed(index, 'is not an object');
  const match = raw as Record<string, unknown>;
  const out = {} as SymbolMatch;
  for (const field of MATCH_FIELDS) {
    const value = match[field];
    if (typeof value !== 'string') throw malformed(index, `has no "${field}"`);
    out[field] = value;
  }
  if (out['1. symbol'].trim() === '') throw malformed(index, 'has an empty symbol');
  const score = parseDecimal(out['9. matchScore']);
  if (score === undefined || score < 0 || score > 1) throw malformed(index, 'has a malformed matchScore');
  return out;
}

function malformed(index: number, what: string): UnreadableAnswerError {
  return new UnreadableAnswerError('search-match', `Alpha Vantage sent a search match (#${index + 1}) that ${what}`);
}
