// GET /api/provider-a/search?keywords=micro -> { "bestMatches": [...] }, Alpha Vantage's SYMBOL_SEARCH.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MATCH_FIELDS } from '../../wire/alpha-vantage/bodies.js';
import { errorResponses, KeywordsParam, NOT_MODIFIED, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { AppDeps } from '../../deps.js';

const SearchResponse = Type.Object(
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

export function searchRoute(app: FastifyInstance, { search }: Pick<AppDeps, 'search'>): void {
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
        response: { 200: SearchResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => sendCached(request, reply, await search.get(request.query.keywords)),
  );
}
