// GET /api/provider-a/quote?symbol=IBM -> { "Global Quote": { ten string fields } }
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CacheEntry } from '../../cache/cache-store.js';
import type { AppDeps } from '../../deps.js';
import { PRIMARY } from '../../services/data-source.js';
import { QUOTE_FIELDS } from '../../wire/alpha-vantage/bodies.js';
import { errorResponses, NOT_MODIFIED, SymbolParam } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';

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
 * Answers GLOBAL_QUOTE for `symbol` (upper case) through the quote service (provider A, else the fallback;
 * see src/services/quote-service.ts); shared by /quote and /query. `X-Data-Source` says who produced it.
 */
export async function serveQuote(
  { quotes }: Pick<AppDeps, 'quotes'>,
  request: FastifyRequest,
  reply: FastifyReply,
  symbol: string,
): Promise<FastifyReply> {
  const { result, source } = await quotes.get(symbol);
  reply.header('x-data-source', source);
  // The hot path replays provider-A answers only: a fallback answer must give way to provider A's next one.
  const onHotAnswer = source === PRIMARY ? (entry: CacheEntry) => quotes.servedHot(symbol, entry) : undefined;
  return sendCached(request, reply, result, onHotAnswer === undefined ? { hot: false } : { onHotAnswer });
}

export function quoteRoute(app: FastifyInstance, deps: Pick<AppDeps, 'quotes'>): void {
  // The stream's poller revalidates: it wants a new value rather than the stale one again.
  app.liveTopics.provide('quote', async (symbol, { revalidate }) => (await deps.quotes.get(symbol, { revalidate })).result);
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
      return serveQuote(deps, request, reply, symbol);
    },
  );
}
