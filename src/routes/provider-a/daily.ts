// GET /api/provider-a/daily?symbol=IBM[&outputsize=compact|full] -> Alpha Vantage's TIME_SERIES_DAILY body.
// serveSeries answers every TIME_SERIES_* function for /query too.
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  OUTPUT_SIZES,
  SERIES_FUNCTIONS,
  SERIES_INTERVALS,
  type SeriesQuery,
  seriesKey,
  takesOutputSize,
} from '../../wire/alpha-vantage/time-series.js';
import { ALPHA_VANTAGE } from '../../core/upstream-ids.js';
import { errorResponses, NOT_MODIFIED, StringEnum, SymbolParam } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { ProviderADeps } from './search.js';

const SERIES_KEYS = [
  ...SERIES_FUNCTIONS.filter((fn) => fn !== 'TIME_SERIES_INTRADAY').map((fn) => seriesKey(fn)),
  ...SERIES_INTERVALS.map((interval) => seriesKey('TIME_SERIES_INTRADAY', interval)),
];
const Rows = Type.Record(Type.String(), Type.Record(Type.String(), Type.String()));

/** One optional property per series name, not an index signature that would clash with "Meta Data" (see TechnicalResponse). */
export const TimeSeriesResponse = Type.Object(
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
    StringEnum(OUTPUT_SIZES, { default: 'compact', description: 'compact: the latest 100 days; full: the whole history.' }),
  ),
});

/** Answers a TIME_SERIES_* function through the cache; `query.symbol` is upper case. */
export async function serveSeries(
  deps: ProviderADeps,
  request: FastifyRequest,
  reply: FastifyReply,
  query: SeriesQuery,
): Promise<FastifyReply> {
  const { SERIES_DAILY, SERIES_INTRADAY } = deps.config.cache.windows;
  const intraday = query.fn === 'TIME_SERIES_INTRADAY';
  const canonical: SeriesQuery = {
    fn: query.fn,
    symbol: query.symbol,
    outputsize: takesOutputSize(query.fn) ? (query.outputsize ?? 'compact') : undefined,
    interval: intraday ? (query.interval ?? '5min') : undefined,
    month: intraday ? query.month : undefined,
    extendedHours: intraday ? query.extendedHours : undefined,
    adjusted: intraday ? query.adjusted : undefined,
  };
  const { fn, symbol, outputsize, interval, month, extendedHours, adjusted } = canonical;
  const flags = `${extendedHours ?? '-'}:${adjusted ?? '-'}`;
  const key = `${deps.scopes.of(ALPHA_VANTAGE)}:series:${fn}:${symbol}:${outputsize ?? '-'}:${interval ?? '-'}:${month ?? '-'}:${flags}`;
  const load = () => deps.alphaVantage().timeSeries(canonical);
  return sendCached(
    request,
    reply,
    await deps.cache.fetch(key, intraday ? SERIES_INTRADAY : SERIES_DAILY, load, { upstream: ALPHA_VANTAGE }),
  );
}

export function dailyRoute(app: FastifyInstance, deps: ProviderADeps): void {
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
        response: { 200: TimeSeriesResponse, ...NOT_MODIFIED, ...errorResponses(400, 404, 429, 502, 503, 504) },
      },
      preValidation: async (request) => {
        const query = request.query as Record<string, unknown>;
        if (typeof query.outputsize === 'string') query.outputsize = query.outputsize.toLowerCase();
      },
    },
    async (request, reply) => {
      const { symbol, outputsize } = request.query as Static<typeof Querystring>;
      return serveSeries(deps, request, reply, { fn: 'TIME_SERIES_DAILY', symbol: symbol.toUpperCase(), outputsize });
    },
  );
}
