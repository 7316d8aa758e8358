// GET /api/provider-a/quote?symbol=IBM -> { "Global Quote": { ten string fields } }
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CacheResult } from '../../cache/cache-store.js';
import type { FetchOptions } from '../../cache/upstream-cache.js';
import { QUOTE_FIELDS } from '../../upstreams/alpha-vantage/parse-global-quote.js';
import { errorResponses, NOT_MODIFIED, SymbolParam } from '../schemas.js';
import { sendCached } from '../send-cached.js';
import { ALPHA_VANTAGE, type ClientGetter } from './index.js';

const FIELD_PATTERNS: Record<string, string> = {
  '05. price': '^-?\\d+\\.\\d{4}$',
  '09. change': '^-?\\d+\\.\\d{4}$',
  '10. change percent': '^-?\\d+\\.\\d{4}%$',
};

const GlobalQuote = Type.Object(
  Object.fromEntries(QUOTE_FIELDS.map((field) => [field, Type.String(FIELD_PATTERNS[field] ? { pattern: FIELD_PATTERNS[field] } : {})])),
  { additionalProperties: false },
);

export const QuoteResponse = Type.Object({ 'Global Quote': GlobalQuote }, { additionalProperties: false, $id: 'QuoteResponse' });

const Querystring = Type.Object({ symbol: SymbolParam });

/**
 * GLOBAL_QUOTE for `symbol` (upper case) through the cache: what /quote, /query and the `quote` stream
 * topic serve (`extra.revalidate` for the stream's poller).
 */
export function loadQuote(app: FastifyInstance, client: ClientGetter, symbol: string, extra: Partial<FetchOptions> = {}): Promise<CacheResult<unknown>> {
  const window = app.deps.config.cache.windows.QUOTE;
  return app.deps.cache.fetch(`${app.deps.scopes.of(ALPHA_VANTAGE)}:quote:${symbol}`, window, () => client().globalQuote(symbol), { upstream: ALPHA_VANTAGE, ...extra });
}

/** Answers GLOBAL_QUOTE for `symbol` (upper case) through the cache; shared by /quote and /query. */
export async function serveQuote(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  client: ClientGetter,
  symbol: string,
): Promise<FastifyReply> {
  return sendCached(request, reply, await loadQuote(app, client, symbol));
}

export function quoteRoute(app: FastifyInstance, client: ClientGetter): void {
  app.liveTopics.provide('quote', (symbol, { revalidate }) => loadQuote(app, client, symbol, { revalidate }));
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/quote',
    {
      schema: {
        operationId: 'getQuote',
        summary: 'Latest quote for a symbol',
        description:
          'Alpha Vantage GLOBAL_QUOTE. All values are strings; prices and change have four decimals, change percent four decimals and a trailing %. Cached (fresh 60 s by default); see X-Cache and Age.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: QuoteResponse, ...NOT_MODIFIED, ...errorResponses(400, 404, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const symbol = (request.query as Static<typeof Querystring>).symbol.toUpperCase();
      return serveQuote(app, request, reply, client, symbol);
    },
  );
}
