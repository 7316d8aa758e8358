// The shapes of Alpha Vantage's data bodies that more than one side reads: the adapter parses them, the
// simulator writes them, the routes document them.

/** GLOBAL_QUOTE: ten string fields under "Global Quote". */
export const QUOTE_FIELDS = [
  '01. symbol',
  '02. open',
  '03. high',
  '04. low',
  '05. price',
  '06. volume',
  '07. latest trading day',
  '08. previous close',
  '09. change',
  '10. change percent',
] as const;

export type QuoteField = (typeof QUOTE_FIELDS)[number];
export type GlobalQuote = Record<QuoteField, string>;
export interface GlobalQuoteBody {
  'Global Quote': GlobalQuote;
}

/** SYMBOL_SEARCH: nine string fields per match under "bestMatches". */
export const MATCH_FIELDS = [
  '1. symbol',
  '2. name',
  '3. type',
  '4. region',
  '5. marketOpen',
  '6. marketClose',
  '7. timezone',
  '8. currency',
  '9. matchScore',
] as const;

export type SymbolMatch = Record<(typeof MATCH_FIELDS)[number], string>;
export interface SymbolSearchBody {
  bestMatches: SymbolMatch[];
}
