// GET /api/provider-b/dividends[?symbol=AAPL][&limit=100][&cursor=...]
//   -> { results: [upstream records], count, next: "/api/provider-b/dividends?...&cursor=..." | null }
// `next` is a path on this service (relative, so it is right behind any proxy or host name); the pages
// are read and linked by services/dividend-service.ts.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CURSOR_PATTERN } from '../../upstreams/massive/dividend-cursor.js';
import { errorResponses, NOT_MODIFIED, SymbolParam, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../services/dividend-service.js';

const Querystring = Type.Object({
  symbol: Type.Optional(SymbolParam),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Records per page (default ${DEFAULT_LIMIT}).` })),
  cursor: Type.Optional(
    Type.String({ pattern: CURSOR_PATTERN, description: 'Opaque; take it from the "next" link of the previous page.' }),
  ),
});

const DateString = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

/** One dividend as Massive gives it; the MCP tool get_dividends sends the same records. */
export const DividendRecord = Type.Object(
  {
    id: Type.Optional(Type.String()),
    ticker: Type.String(),
    cash_amount: Type.Number(),
    currency: Type.Optional(Type.String()),
    declaration_date: Type.Optional(DateString),
    ex_dividend_date: DateString,
    pay_date: Type.Optional(DateString),
    record_date: Type.Optional(DateString),
    frequency: Type.Optional(Type.Integer({ description: 'Payments a year: 0 one-off, 1, 2, 4, 12, 24, 52.' })),
    dividend_type: Type.Optional(Type.String({ description: 'CD regular, SC special, LT/ST capital gains.' })),
  },
  { additionalProperties: false },
);

const DividendsResponse = Type.Object(
  {
    results: Type.Array(DividendRecord),
    count: Type.Integer({ description: 'Records on this page.' }),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'Path of the following page on this service, or null on the last page.',
    }),
  },
  { additionalProperties: false, $id: 'DividendsResponse' },
);
/** Where the route is (app.ts registers provider B at /api/provider-b): the pages' `next` links, whoever read them first, point here. */
export const DIVIDENDS_PATH = '/api/provider-b/dividends';

export function dividendsRoute(app: FastifyInstance, { dividends }: Pick<AppDeps, 'dividends'>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/dividends',
    {
      schema: {
        operationId: 'getDividends',
        summary: 'Dividends, newest ex-dividend date first',
        description:
          'Massive (formerly Polygon.io) reference dividends. With symbol, only that ticker (upper-cased); without it, all stocks. ' +
          'Pages of `limit` records; follow `next` (a path on this service) for the following page. A symbol without dividends gives an empty list. ' +
          'Cached (fresh 12 h by default); see X-Cache and Age.',
        tags: ['provider-b'],
        querystring: Querystring,
        response: { 200: DividendsResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => sendCached(request, reply, await dividends.page(request.query, DIVIDENDS_PATH)),
  );
}
