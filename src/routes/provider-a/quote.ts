// GET /api/provider-a/quote?symbol=IBM -> { "Global Quote": { ten string fields } }, how fresh in
// X-Data-Freshness. The stream's `quote` events carry the same body with the freshness beside it.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CacheEntry, CacheResult } from '../../cache/cache-store.js';
import type { Freshness } from '../../core/freshness.js';
import type { AppDeps } from '../../deps.js';
import type { GlobalQuoteBody } from '../../wire/alpha-vantage/bodies.js';
import { QUOTE_FIELDS } from '../../wire/alpha-vantage/bodies.js';
import { errorResponses, NOT_MODIFIED, SymbolParam, type TypeBoxTypeProvider } from '../schemas.js';
import { sendSourced } from '../../plugins/app/send-cached.js';

const FIELD_PATTERNS: Record<string, string> = {
  '05. price': '^-?\\d+\\.\\d{4}$',
  '09. change': '^-?\\d+\\.\\d{4}$',
  '10. change percent': '^-?\\d+\\.\\d{4}%$',
};

const GlobalQuote = Type.Object(
  Object.fromEntries(QUOTE_FIELDS.map((field) => [field, Type.String(FIELD_PATTERNS[field] ? { pattern: FIELD_PATTERNS[field] } : {})])),
  { additionalProperties: false },
);

const QuoteResponse = Type.Object({ 'Global Quote': GlobalQuote }, { additionalProperties: false, $id: 'QuoteResponse' });

const Querystring = Type.Object({ symbol: SymbolParam });

type QuoteEvent = GlobalQuoteBody & { freshness?: Freshness };

/** One event body per cache entry (its freshness is the entry's), so a poll that finds the same entry sends nothing. */
const events = new WeakMap<CacheEntry<GlobalQuoteBody>, CacheEntry<QuoteEvent>>();

/** A stream event has no headers: the body the GET answers, with what its X-Data-Freshness says as `freshness`. */
function quoteEvent({ entry, status, freshness }: CacheResult<GlobalQuoteBody> & { freshness?: Freshness }): CacheResult<QuoteEvent> {
  let event = events.get(entry);
  if (event === undefined) {
    event = { ...entry, value: { ...entry.value, freshness } };
    events.set(entry, event);
  }
  return { entry: event, status };
}

export function quoteRoute(app: FastifyInstance, deps: Pick<AppDeps, 'quotes'>): void {
  // The stream's poller revalidates: it wants a new value rather than the stale one again.
  app.liveTopics.provide('quote', async (symbol, { revalidate }) => quoteEvent((await deps.quotes.get(symbol, { revalidate })).result));
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/quote',
    {
      schema: {
        operationId: 'getQuote',
        summary: 'Latest quote for a symbol',
        description:
          'Alpha Vantage GLOBAL_QUOTE. All values are strings; prices and change have four decimals, change percent four decimals and a trailing %. How fresh the price is: X-Data-Freshness. Cached (fresh 60 s by default); see X-Cache and Age.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: QuoteResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 404, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => sendSourced(request, reply, await deps.quotes.get(request.query.symbol.toUpperCase())),
  );
}
