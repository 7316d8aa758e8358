// GET /api/provider-a/daily?symbol=IBM[&outputsize=compact|full] -> Alpha Vantage's TIME_SERIES_DAILY body,
// from the series service, which answers every TIME_SERIES_* function for /query too.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { OUTPUT_SIZES, SERIES_FUNCTIONS, SERIES_INTERVALS, seriesKey } from '../../wire/alpha-vantage/time-series.js';
import { ANY_CASE, CASE_INSENSITIVE, errorResponses, NOT_MODIFIED, StringEnum, SymbolParam, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';

const SERIES_KEYS = [
  ...SERIES_FUNCTIONS.filter((fn) => fn !== 'TIME_SERIES_INTRADAY').map((fn) => seriesKey(fn)),
  ...SERIES_INTERVALS.map((interval) => seriesKey('TIME_SERIES_INTRADAY', interval)),
];
const Rows = Type.Record(Type.String(), Type.Record(Type.String(), Type.String()));

/** One optional property per series name, not an index signature that would clash with "Meta Data" (see TechnicalResponse). */
const TimeSeriesResponse = Type.Object(
  { 'Meta Data': Type.Record(Type.String(), Type.String()), ...Object.fromEntries(SERIES_KEYS.map((key) => [key, Type.Optional(Rows)])) },
  {
    $id: 'TimeSeriesResponse',
    description:
      'The upstream shape: "Meta Data" plus one series object ("Time Series (Daily)", "Weekly Time Series", "Monthly Time Series" or "Time Series (<interval>)") keyed by date or date-time, newest first; each row has "1. open" … "5. volume" as strings.',
    additionalProperties: false,
    minProperties: 2,
    maxProperties: 2,
  },
);

const Querystring = Type.Object({
  symbol: SymbolParam,
  outputsize: Type.Optional(
    StringEnum(OUTPUT_SIZES, {
      default: 'compact',
      description: `compact: the latest 100 days; full: the whole history. ${ANY_CASE}`,
      [CASE_INSENSITIVE]: true,
    }),
  ),
});

export function dailyRoute(app: FastifyInstance, { series }: Pick<AppDeps, 'series'>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/daily',
    {
      schema: {
        operationId: 'getDailySeries',
        summary: 'Daily prices for a symbol',
        description:
          'Alpha Vantage TIME_SERIES_DAILY in its own shape: open, high, low, close and volume per trading day, newest first. Cached (fresh 1 h by default); each miss spends one provider-A call.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: TimeSeriesResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 404, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const { symbol, outputsize } = request.query;
      return sendCached(request, reply, await series.get({ fn: 'TIME_SERIES_DAILY', symbol: symbol.toUpperCase(), outputsize }));
    },
  );
}
