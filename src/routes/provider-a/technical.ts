// GET /api/provider-a/technical?symbol=IBM&indicator=RSI&interval=daily[&time_period=14][&series_type=close]
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
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

export function technicalRoute(app: FastifyInstance, client: ClientGetter): void {
  const { TECHNICAL_DAILY, TECHNICAL_INTRADAY } = app.deps.config.cache.windows;
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
      const symbol = query.symbol.toUpperCase();
      const spec = indicatorSpec(query.indicator);
      const timePeriod = spec?.timePeriod === null ? undefined : (query.time_period ?? spec?.timePeriod ?? undefined);
      const seriesType = spec?.seriesType ? (query.series_type ?? 'close') : undefined;
      const key = `av:tech:${query.indicator}:${symbol}:${query.interval}:${timePeriod ?? '-'}:${seriesType ?? '-'}`;
      const window = INTRADAY_INTERVALS.has(query.interval) ? TECHNICAL_INTRADAY : TECHNICAL_DAILY;
      const load = () => client().technical({ symbol, indicator: query.indicator, interval: query.interval, timePeriod, seriesType });
      return sendCached(request, reply, await app.deps.cache.fetch(key, window, load, { upstream: ALPHA_VANTAGE }));
    },
  );
}
