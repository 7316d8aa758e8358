// GET /api/provider-a/technical?symbol=IBM&indicator=RSI&interval=daily[&time_period=14][&series_type=close][&fastperiod=…]
// Parameters an indicator does not take are ignored and never forwarded, as Alpha Vantage ignores them.
// Provider A's answer, or the indicator computed from the stored Yahoo bars, as TECHNICAL_SOURCE says
// (services/technical-service.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { INDICATOR_PARAM_NAMES, INDICATORS, INTERVALS, sectionKey, SERIES_TYPES } from '../../wire/alpha-vantage/indicators.js';
import { ANY_CASE, CASE_INSENSITIVE, errorResponses, NOT_MODIFIED, StringEnum, SymbolParam, type TypeBoxTypeProvider } from '../schemas.js';
import { sendSourced } from '../../plugins/app/send-cached.js';
import type { AppDeps } from '../../deps.js';
import { technicalQuery } from '../../services/technical-service.js';

const optional = (description: string) => Type.Optional(Type.String({ maxLength: 32, description }));

const Querystring = Type.Object({
  symbol: SymbolParam,
  indicator: StringEnum(INDICATORS, { default: 'RSI', description: `Indicator function. ${ANY_CASE}`, [CASE_INSENSITIVE]: true }),
  interval: StringEnum(INTERVALS, { default: 'daily', description: `Bar interval. ${ANY_CASE}`, [CASE_INSENSITIVE]: true }),
  time_period: optional('Bars per value, a whole number from 2 to 1000, for indicators that take one (default 14; 20 for BBANDS).'),
  series_type: optional(`Price series for price-based indicators: ${SERIES_TYPES.join(', ')} (default close).`),
  month: optional('YYYY-MM: that month of intraday history (intraday intervals only).'),
  ...Object.fromEntries(
    INDICATOR_PARAM_NAMES.map((name) => [
      name,
      optional(`Alpha Vantage's ${name}, for the indicators that take it (Alpha Vantage's default when absent).`),
    ]),
  ),
});

const Series = Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), {
  description: 'Rows keyed by date or date-time, newest first; each row maps value names to 4-decimal strings.',
});

/**
 * One optional property per section name rather than an index signature: generated client types (and a
 * real body) must be able to hold "Meta Data" beside the series, and an index signature would have to
 * describe both.
 */
const TechnicalResponse = Type.Object(
  {
    'Meta Data': Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()])),
    ...Object.fromEntries([...new Set(INDICATORS.map(sectionKey))].map((key) => [key, Type.Optional(Series)])),
  },
  {
    $id: 'TechnicalResponse',
    description: 'The upstream shape: "Meta Data" plus the one "Technical Analysis: <section>" series of the indicator asked for.',
    additionalProperties: false,
    minProperties: 2,
    maxProperties: 2,
  },
);

export function technicalRoute(app: FastifyInstance, deps: Pick<AppDeps, 'technical'>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/technical',
    {
      schema: {
        operationId: 'getTechnical',
        summary: 'Technical indicator series for a symbol',
        description:
          "Alpha Vantage technical indicators in the upstream shape: provider A's, validated, or computed from the stored Yahoo chart bars in the same shape (X-Data-Source: yahoo), as TECHNICAL_SOURCE says (default auto: computed where the bars give provider A's values, provider A for the rest; needs QUOTE_FALLBACK=yahoo).",
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: TechnicalResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 404, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => sendSourced(request, reply, await deps.technical.get(technicalQuery(request.query))),
  );
}
