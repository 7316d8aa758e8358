// GET /api/provider-a/search?keywords=micro -> { "bestMatches": [...] }, Alpha Vantage's SYMBOL_SEARCH.
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MATCH_FIELDS } from '../../wire/alpha-vantage/bodies.js';
import { errorResponses, NOT_MODIFIED } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { AppDeps } from '../../deps.js';
import { ALPHA_VANTAGE } from '../../core/upstream-ids.js';

/** Letters (any script), digits, spaces and the punctuation company names and tickers use. */
const KEYWORDS_PATTERN = "^[\\p{L}\\p{N} .,&'^=/()-]{1,64}$";

export const KeywordsParam = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: KEYWORDS_PATTERN,
  description: 'Part of a symbol or company name (case-insensitive), at most 64 characters.',
  examples: ['micro'],
});

export const SearchResponse = Type.Object(
  {
    bestMatches: Type.Array(Type.Object(Object.fromEntries(MATCH_FIELDS.map((f) => [f, Type.String()])), { additionalProperties: false })),
  },
  {
    additionalProperties: false,
    $id: 'SearchResponse',
    description: 'Alpha Vantage SYMBOL_SEARCH: best matches first; no match is an empty list.',
  },
);

const Querystring = Type.Object({ keywords: KeywordsParam });

/** Answers SYMBOL_SEARCH through the cache (a day fresh by default); shared by /search and /query. */
export type ProviderADeps = Pick<AppDeps, 'config' | 'scopes' | 'cache' | 'alphaVantage'>;

export async function serveSearch(
  deps: ProviderADeps,
  request: FastifyRequest,
  reply: FastifyReply,
  keywords: string,
): Promise<FastifyReply> {
  const text = keywords.trim();
  const key = `${deps.scopes.of(ALPHA_VANTAGE)}:search:${text.toLowerCase()}`;
  const result = await deps.cache.fetch(key, deps.config.cache.windows.SEARCH, () => deps.alphaVantage().symbolSearch(text), {
    upstream: ALPHA_VANTAGE,
  });
  return sendCached(request, reply, result);
}

export function searchRoute(app: FastifyInstance, deps: ProviderADeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/search',
    {
      schema: {
        operationId: 'searchSymbols',
        summary: 'Symbols and companies matching some keywords',
        description:
          'Alpha Vantage SYMBOL_SEARCH in its own shape: up to ten matches, each with nine string fields and a matchScore. Cached (fresh a day by default); each miss spends one provider-A call.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: SearchResponse, ...NOT_MODIFIED, ...errorResponses(400, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => serveSearch(deps, request, reply, (request.query as Static<typeof Querystring>).keywords),
  );
}
