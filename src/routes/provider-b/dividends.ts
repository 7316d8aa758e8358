// GET /api/provider-b/dividends[?symbol=AAPL][&limit=100][&cursor=...]
//   -> { results: [upstream records], count, next: "/api/provider-b/dividends?...&cursor=..." | null }
// `next` is a path on this service (relative, so it is right behind any proxy or host name); its cursor
// is opaque and bound to the symbol and limit of the page it continues.
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { type CursorCodec, CURSOR_PATTERN, type CursorState } from '../../upstreams/massive/dividend-cursor.js';
import { errorResponses, NOT_MODIFIED, SymbolParam } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { AppDeps } from '../../deps.js';
import { MASSIVE } from '../../core/upstream-ids.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

const Querystring = Type.Object({
  symbol: Type.Optional(SymbolParam),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Records per page (default ${DEFAULT_LIMIT}).` })),
  cursor: Type.Optional(
    Type.String({ pattern: CURSOR_PATTERN, description: 'Opaque; take it from the "next" link of the previous page.' }),
  ),
});
type Query = Static<typeof Querystring>;

const DateString = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

const DividendRecord = Type.Object(
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

export const DividendsResponse = Type.Object(
  {
    results: Type.Array(DividendRecord),
    count: Type.Integer({ description: 'Records on this page.' }),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'Path of the following page on this service, or null on the last page.',
    }),
  },
  { additionalProperties: false, $id: 'DividendsResponse' },
);
type Body = Static<typeof DividendsResponse>;

/** The page to read: from the query alone, or from a cursor that must agree with it. */
export function resolvePage(query: Query, cursors: CursorCodec): { symbol: string | null; limit: number; cursor: string | null } {
  const symbol = query.symbol === undefined ? null : query.symbol.toUpperCase();
  if (query.cursor === undefined) return { symbol, limit: query.limit ?? DEFAULT_LIMIT, cursor: null };
  const state = cursors.decode(query.cursor);
  if (query.symbol !== undefined && symbol !== state.symbol) {
    throw new ApiError('INVALID_PARAMETER', 'cursor belongs to a different symbol: use the "next" link as given');
  }
  if (query.limit !== undefined && query.limit !== state.limit) {
    throw new ApiError('INVALID_PARAMETER', 'cursor belongs to a different limit: use the "next" link as given');
  }
  return { symbol: state.symbol, limit: state.limit, cursor: state.upstream };
}

export function nextLink(path: string, state: CursorState, cursors: CursorCodec): string {
  const params = new URLSearchParams();
  if (state.symbol !== null) params.set('symbol', state.symbol);
  params.set('limit', String(state.limit));
  params.set('cursor', cursors.encode(state));
  return `${path}?${params.toString()}`;
}

export function dividendsRoute(app: FastifyInstance, deps: Pick<AppDeps, 'config' | 'scopes' | 'cache' | 'massive' | 'cursors'>): void {
  const { cache, cursors } = deps;
  const window = deps.config.cache.windows.DIVIDENDS;
  const scope = deps.scopes.of(MASSIVE);
  const path = `${app.prefix}/dividends`;
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
        response: { 200: DividendsResponse, ...NOT_MODIFIED, ...errorResponses(400, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      // A bad cursor is the caller's mistake: refused before the provider is even looked at.
      const page = resolvePage(request.query as Query, cursors);
      const massive = deps.massive();
      const key = `${scope}:div:${page.symbol ?? '*'}:${page.limit}:${page.cursor ?? '-'}`;
      const load = async (): Promise<Body> => {
        const upstream = await massive.dividends({ ticker: page.symbol ?? undefined, limit: page.limit, cursor: page.cursor ?? undefined });
        const next =
          upstream.nextCursor === null
            ? null
            : nextLink(path, { symbol: page.symbol, limit: page.limit, upstream: upstream.nextCursor }, cursors);
        return { results: upstream.results, count: upstream.results.length, next };
      };
      return sendCached(request, reply, await cache.fetch(key, window, load, { upstream: MASSIVE }));
    },
  );
}
