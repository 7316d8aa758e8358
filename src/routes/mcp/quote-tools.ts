// get_quotes and search_symbols: GET /api/provider-a/quote (one symbol a call; here up to 20, each read as that
// route reads it) and GET /api/provider-a/search, through the same services. Alpha Vantage's strings are sent as
// numbers; the values are the REST answer's.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import type { Freshness as FreshnessValue } from '../../core/freshness.js';
import type { SourcedResult } from '../../services/quote-service.js';
import type { GlobalQuoteBody } from '../../wire/alpha-vantage/bodies.js';
import { KeywordsParam } from '../schemas.js';
import { Freshness, Num, numberOf, Source, Symbols } from './schemas.js';
import { answer, tool } from './tool.js';
import { errorFields } from './tool-result.js';

const MAX_QUOTES = 20;

const Quote = Type.Object(
  {
    symbol: Type.String(),
    price: Num(),
    change: Num(),
    changePercent: Num('In percent: 0.56 is 0.56 %.'),
    volume: Num(),
    open: Num(),
    high: Num(),
    low: Num(),
    previousClose: Num(),
    tradingDay: Type.String({ description: 'The latest trading day, YYYY-MM-DD.' }),
    source: Source,
    freshness: Freshness,
  },
  { additionalProperties: false },
);

const SymbolError = Type.Object(
  {
    symbol: Type.String(),
    code: Type.String(),
    message: Type.String(),
    retryAfterSeconds: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

type QuoteRow = (typeof Quote)['static'];

function quoteRow({ result, source }: SourcedResult<GlobalQuoteBody>): QuoteRow {
  const q = result.entry.value['Global Quote'];
  return {
    symbol: q['01. symbol'],
    price: numberOf(q['05. price']),
    change: numberOf(q['09. change']),
    changePercent: numberOf(q['10. change percent']),
    volume: numberOf(q['06. volume']),
    open: numberOf(q['02. open']),
    high: numberOf(q['03. high']),
    low: numberOf(q['04. low']),
    previousClose: numberOf(q['08. previous close']),
    tradingDay: q['07. latest trading day'],
    source,
    freshness: result.freshness as FreshnessValue,
  };
}

const signed = (n: number | null, unit = '') => (n === null ? '?' : `${n >= 0 ? '+' : ''}${n}${unit}`);

export const getQuotes = tool({
  name: 'get_quotes',
  title: 'Latest quotes',
  description:
    'Latest price, change, volume and trading day of 1 to 20 stock symbols, each with where it came from and how fresh it is. Use it for current prices; an unknown symbol is reported on its own, the others still answer.',
  input: Type.Object({ symbols: Symbols(MAX_QUOTES, 'Ticker symbols, e.g. ["IBM", "MSFT"].') }, { additionalProperties: false }),
  output: { quotes: Type.Array(Quote), errors: Type.Array(SymbolError, { description: 'Symbols that could not be answered.' }) },
  async run({ symbols }, { deps, local }) {
    const distinct = [...new Set(symbols.map((symbol) => symbol.toUpperCase()))];
    const settled = await Promise.allSettled(distinct.map((symbol) => deps.quotes.get(symbol)));
    const quotes: QuoteRow[] = [];
    const errors: (typeof SymbolError)['static'][] = [];
    settled.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') quotes.push(quoteRow(outcome.value));
      // Something unexpected fails the call, where it is logged; the service's own errors are the symbol's.
      else if (outcome.reason instanceof ApiError) errors.push({ symbol: distinct[i] as string, ...errorFields(outcome.reason, local()) });
      else throw outcome.reason;
    });
    // Nothing answered: the tool's error is the first symbol's, as the REST route's would be.
    const failed = settled[0];
    if (quotes.length === 0 && failed?.status === 'rejected') throw failed.reason;
    return answer({
      content: { quotes, errors },
      rows: { path: ['quotes'], hint: () => 'Ask for fewer symbols at a time.' },
      text: ({ quotes, errors }) =>
        [
          ...quotes.map(
            (q) =>
              `${q.symbol} ${q.price ?? '?'} (${signed(q.change)}, ${signed(q.changePercent, ' %')}) on ${q.tradingDay}, ${q.freshness.kind}, from ${q.source}.`,
          ),
          ...errors.map((e) => `${e.symbol}: ${e.code}, ${e.message}.`),
        ].join(' '),
    });
  },
});

const Match = Type.Object(
  {
    symbol: Type.String(),
    name: Type.String(),
    type: Type.String(),
    region: Type.String(),
    marketOpen: Type.String(),
    marketClose: Type.String(),
    timezone: Type.String(),
    currency: Type.String(),
    matchScore: Num('From 0 to 1.'),
  },
  { additionalProperties: false },
);

export const searchSymbols = tool({
  name: 'search_symbols',
  title: 'Find symbols',
  description:
    'Symbols and companies matching a name or part of a ticker, best first (up to 10). Use it to find the symbol of a company before asking for its quote or history.',
  input: Type.Object({ keywords: KeywordsParam }, { additionalProperties: false }),
  output: { matches: Type.Array(Match) },
  async run({ keywords }, { deps }) {
    const { entry } = await deps.search.get(keywords);
    const matches = entry.value.bestMatches.map((m) => ({
      symbol: m['1. symbol'],
      name: m['2. name'],
      type: m['3. type'],
      region: m['4. region'],
      marketOpen: m['5. marketOpen'],
      marketClose: m['6. marketClose'],
      timezone: m['7. timezone'],
      currency: m['8. currency'],
      matchScore: numberOf(m['9. matchScore']),
    }));
    return answer({
      content: { matches },
      rows: { path: ['matches'], hint: () => 'Ask with more precise keywords.' },
      text: ({ matches }) =>
        matches.length === 0
          ? `No symbol matches "${keywords}".`
          : `${matches.length} match${matches.length === 1 ? '' : 'es'}: ${matches.map((m) => `${m.symbol} (${m.name}, ${m.region})`).join('; ')}.`,
    });
  },
});
