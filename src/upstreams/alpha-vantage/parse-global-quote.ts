// GLOBAL_QUOTE: ten string fields, re-rendered in the documented formats; `{}` means an unknown symbol.
import { NotFoundAnswerError, UnreadableAnswerError } from '../../core/errors.js';
import { type GlobalQuote, type GlobalQuoteBody, QUOTE_FIELDS, type QuoteField } from '../../wire/alpha-vantage/bodies.js';
import { fixed, parseDecimal } from '../../wire/alpha-vantage/decimal.js';

const FOUR_DECIMALS: QuoteField[] = ['02. open', '03. high', '04. low', '05. price', '08. previous close', '09. change'];

/** Takes a body already classified as data. */
export function parseGlobalQuote(body: Record<string, unknown>): GlobalQuoteBody {
  const quote = body['Global Quote'];
  if (quote === null || typeof quote !== 'object' || Array.isArray(quote)) {
    throw new UnreadableAnswerError('no-global-quote', 'Alpha Vantage sent a quote body without "Global Quote"');
  }
  const raw = quote as Record<string, unknown>;
  if (Object.keys(raw).length === 0) throw new NotFoundAnswerError('no quote for this symbol');

  const out = {} as GlobalQuote;
  for (const field of QUOTE_FIELDS) {
    const value = raw[field];
    if (typeof value !== 'string' || value.trim() === '') throw unexpected(field);
    out[field] = value.trim();
  }
  for (const field of FOUR_DECIMALS) out[field] = fourDecimals(out[field], field);
  out['06. volume'] = wholeNumber(out['06. volume']);
  out['10. change percent'] = `${fourDecimals(out['10. change percent'], '10. change percent')}%`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(out['07. latest trading day'])) throw unexpected('07. latest trading day');
  return { 'Global Quote': out };
}

function fourDecimals(raw: string, field: QuoteField): string {
  const n = parseDecimal(raw);
  if (n === undefined) throw unexpected(field);
  return fixed(n, 4);
}

function wholeNumber(raw: string): string {
  const n = parseDecimal(raw);
  if (n === undefined || n < 0) throw unexpected('06. volume');
  return String(Math.round(n));
}

function unexpected(field: string): UnreadableAnswerError {
  return new UnreadableAnswerError('quote-field', `Alpha Vantage sent a quote with a missing or malformed "${field}"`);
}
