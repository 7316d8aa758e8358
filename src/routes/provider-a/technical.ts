// GET /api/provider-a/technical?symbol=IBM&indicator=RSI&interval=daily[&time_period=14][&series_type=close]
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TechnicalQuery } from '../../upstreams/alpha-vantage/alpha-vantage-client.js';
import { ApiError } from '../../errors.js';
import { INDICATORS, indicatorSpec, INTERVALS, INTRADAY_INTERVALS, SERIES_TYPES } from '../../upstreams/alpha-vantage/indicators.js';
import { errorResponses, StringEnum, SymbolParam } from '../schemas.js';
import { sendCached } from '../send-cached.js';
import { ALPHA_VANTAGE, type ClientGetter } from './index.js';

const Querystring = Type.Object({
  symbol: SymbolParam,
  indicator: StringEnum(INDICATORS, { default: 'RSI', description: 'Indicator function (case-insensitive).' }),
  interval: StringEnum(INTERVALS, { default: 'daily', description: 'Bar interval (case-insensitive).' }),
  time_period: Type.Optional(
    Type.Integer({ minimum: 2, maximum: 1000, description: 'Bars per value, for indicators that take one (default 14; 20 for BBANDS).' }),
  ),
  series_type: Type.Optional(StringEnum(SERIES_TYPES, { description: 'Price series, for price-based indicators (default close).' })),
});
type Query = Static<typeof Querystring>;

export const TechnicalResponse = Type.Object(
  { 'Meta Data': Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()])) },
  {
    $id: 'TechnicalResponse',
    description: 'The upstream shape: "Meta Data" plus one "Technical Analysis: <FN>" object keyed by date or date-time, newest first.',
    additionalProperties: Type.Record(Type.String(), Type.Record(Type.String(), Type.String())),
  },
);

/** Case-insensitive enums: normalised before validation so `rsi` and `Daily` are accepted. */
function normaliseCase(query: Record<string, unknown>): void {
  if (typeof query.indicator === 'string') query.indicator = query.indicator.toUpperCase();
  if (typeof query.interval === 'string') query.interval = query.interval.toLowerCase();
  if (typeof query.series_type === 'string') query.series_type = query.series_type.toLowerCase();
}

function checkApplicable(query: Query): void {
  const spec = indicatorSpec(query.indicator);
  if (query.time_period !== undefined && spec?.timePeriod === null) {
    throw new ApiError('INVALID_PARAMETER', `time_period does not apply to ${query.indicator}`);
  }
  if (query.series_type !== undefined && spec?.seriesType === false) {
    throw new ApiError('INVALID_PARAMETER', `series_type does not apply to ${query.indicator}`);
  }
}

/**
 * Answers a technical indicator through the cache; shared by /technical and /query. `query.symbol` is upper
 * case; parameters the indicator does not take are dropped and the ones it takes get their defaults.
 */
export async function serveTechnical(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  client: ClientGetter,
  query: TechnicalQuery,
): Promise<FastifyReply> {
  const { TECHNICAL_DAILY, TECHNICAL_INTRADAY } = app.deps.config.cache.windows;
  const { symbol, indicator, interval } = query;
  const spec = indicatorSpec(indicator);
  const timePeriod = spec?.timePeriod === null ? undefined : (query.timePeriod ?? spec?.timePeriod ?? undefined);
  const seriesType = spec?.seriesType ? (query.seriesType ?? 'close') : undefined;
  const key = `${app.deps.scopes.of(ALPHA_VANTAGE)}:tech:${indicator}:${symbol}:${interval}:${timePeriod ?? '-'}:${seriesType ?? '-'}`;
  const window = INTRADAY_INTERVALS.has(interval) ? TECHNICAL_INTRADAY : TECHNICAL_DAILY;
  const load = () => client().technical({ symbol, indicator, interval, timePeriod, seriesType });
  return sendCached(request, reply, await app.deps.cache.fetch(key, window, load, { upstream: ALPHA_VANTAGE }));
}

export function technicalRoute(app: FastifyInstance, client: ClientGetter): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/technical',
    {
      schema: {
        summary: 'Technical indicator series for a symbol',
        description: 'Alpha Vantage technical indicators, validated and returned in the upstream shape.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: TechnicalResponse, ...errorResponses(400, 404, 429, 502, 503, 504) },
      },
      preValidation: async (request) => normaliseCase(request.query as Record<string, unknown>),
    },
    async (request, reply) => {
      const query = request.query as Query;
      checkApplicable(query);
      const { indicator, interval, time_period: timePeriod, series_type: seriesType } = query;
      return serveTechnical(app, request, reply, client, { symbol: query.symbol.toUpperCase(), indicator, interval, timePeriod, seriesType });
    },
  );
}
