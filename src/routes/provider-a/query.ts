// GET /api/provider-a/query?function=…: Alpha Vantage's own API, answered through the same services
// (cache, single flight, budget, fallback, headers) as the REST routes, so a client written for Alpha
// Vantage only changes its base URL. The caller's `apikey` is accepted and ignored: it is never forwarded
// (the adapter builds upstream URLs from validated values only) and the request log redacts it.
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { handleError } from '../../plugins/app/error-handler.js';
import { given, readIndicatorOptions, readMonth } from '../../wire/alpha-vantage/indicator-options.js';
import { INDICATOR_PARAM_NAMES, INDICATORS, INTERVALS } from '../../wire/alpha-vantage/indicators.js';
import {
  isSeriesFunction,
  OUTPUT_SIZES,
  type OutputSize,
  SERIES_FUNCTIONS,
  SERIES_INTERVALS,
  type SeriesFunction,
  type SeriesInterval,
  type SeriesQuery,
  takesOutputSize,
} from '../../wire/alpha-vantage/time-series.js';
import {
  ANY_CASE,
  CASE_INSENSITIVE,
  errorResponses,
  KeywordsParam,
  NOT_MODIFIED,
  StringEnum,
  SymbolParam,
  type TypeBoxTypeProvider,
} from '../schemas.js';
import type { AppDeps } from '../../deps.js';
import { sendCached, sendSourced } from '../../plugins/app/send-cached.js';

/** What /query answers; anything else is a 400 naming these, with no upstream call. @internal */
export const ALPHA_VANTAGE_FUNCTIONS = ['GLOBAL_QUOTE', 'SYMBOL_SEARCH', ...SERIES_FUNCTIONS, ...INDICATORS] as const;

/**
 * Alpha Vantage's own key on an error body, so its clients (which test for these keys rather than the
 * status) report an error: "Information" where Alpha Vantage itself would refuse for limits or plan,
 * "Error Message" for everything else.
 */
function alphaVantageErrorKey(error: ApiError): Record<string, string> {
  const key = error.status === 429 || error.status === 503 ? 'Information' : 'Error Message';
  return { [key]: error.message };
}

const text = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

const Querystring = Type.Object({
  function: StringEnum(ALPHA_VANTAGE_FUNCTIONS, {
    description: `Alpha Vantage function. ${ANY_CASE}`,
    examples: ['GLOBAL_QUOTE'],
    [CASE_INSENSITIVE]: true,
  }),
  symbol: Type.Optional(SymbolParam),
  keywords: Type.Optional(KeywordsParam),
  interval: text(`Indicators: ${INTERVALS.join(', ')} (default daily). TIME_SERIES_INTRADAY (required): ${SERIES_INTERVALS.join(', ')}.`),
  outputsize: text('TIME_SERIES_DAILY and TIME_SERIES_INTRADAY: compact (latest 100) or full.'),
  datatype: text('json (the default). csv is not supported.'),
  month: text('YYYY-MM: a month of intraday history (intraday indicators and TIME_SERIES_INTRADAY).'),
  extended_hours: text('TIME_SERIES_INTRADAY: true (default, 04:00-20:00 Eastern) or false (the regular session only).'),
  adjusted: text('TIME_SERIES_INTRADAY: true (default) or false (prices not adjusted for splits and dividends).'),
  time_period: text('Indicators that take one: a whole number from 2 to 1000.'),
  series_type: text('Price-based indicators: close, open, high or low.'),
  ...Object.fromEntries(INDICATOR_PARAM_NAMES.map((name) => [name, text(`The indicators that take ${name}.`)])),
  apikey: Type.Optional(
    Type.String({ maxLength: 128, description: 'Accepted and ignored: the service uses its own key. Never forwarded, never logged.' }),
  ),
});
type Query = Static<typeof Querystring>;

const QueryResponse = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'The body Alpha Vantage sends for the function: QuoteResponse (GLOBAL_QUOTE), TechnicalResponse (indicators), SearchResponse (SYMBOL_SEARCH) or TimeSeriesResponse (TIME_SERIES_*).',
  },
);

type QueryDeps = Pick<AppDeps, 'quotes' | 'technical' | 'search' | 'series'>;

export function queryRoute(app: FastifyInstance, deps: QueryDeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/query',
    {
      schema: {
        operationId: 'alphaVantageQuery',
        summary: 'Alpha Vantage-compatible query',
        description:
          'Alpha Vantage\'s own API (GLOBAL_QUOTE, the indicators, SYMBOL_SEARCH, TIME_SERIES_DAILY/WEEKLY/MONTHLY/INTRADAY) with its bodies, through this service\'s cache and budget: point a client\'s base URL here and drop the key. Errors are the usual error body plus Alpha Vantage\'s own key ("Error Message", or "Information" when the budget is spent or the provider unavailable) so Alpha Vantage clients report them.',
        tags: ['provider-a'],
        querystring: Querystring,
        response: { 200: QueryResponse, ...NOT_MODIFIED, ...errorResponses(400, 404, 429, 502, 503, 504) },
      },
      preValidation: async (request) => {
        // Before validation the query is the caller's text: the function is matched trimmed and in any case.
        const query: Record<string, unknown> = request.query;
        if (typeof query.function === 'string') query.function = query.function.trim().toUpperCase();
      },
      errorHandler: (error, request, reply) => handleError(error, request, reply, alphaVantageErrorKey),
    },
    async (request, reply) => answer(deps, request, reply, request.query),
  );
}

async function answer(deps: QueryDeps, request: FastifyRequest, reply: FastifyReply, query: Query): Promise<FastifyReply> {
  readDatatype(query.datatype);
  const fn = query.function;
  if (fn === 'GLOBAL_QUOTE') return sendSourced(request, reply, await deps.quotes.get(required(query.symbol, 'symbol', fn).toUpperCase()));
  if (fn === 'SYMBOL_SEARCH') return sendCached(request, reply, await deps.search.get(required(query.keywords, 'keywords', fn)));
  if (isSeriesFunction(fn)) return sendCached(request, reply, await deps.series.get(seriesQuery(fn, query)));
  const symbol = required(query.symbol, 'symbol', fn).toUpperCase();
  const interval = readEnum(query.interval, 'interval', INTERVALS) ?? 'daily';
  return sendSourced(
    request,
    reply,
    await deps.technical.get({ symbol, indicator: fn, interval, ...readIndicatorOptions(fn, interval, query) }),
  );
}

function seriesQuery(fn: SeriesFunction, query: Query): SeriesQuery {
  const symbol = required(query.symbol, 'symbol', fn).toUpperCase();
  const outputsize = takesOutputSize(fn) ? readEnum(query.outputsize, 'outputsize', OUTPUT_SIZES) : undefined;
  if (fn !== 'TIME_SERIES_INTRADAY') return { fn, symbol, outputsize };
  const interval = readEnum(query.interval, 'interval', SERIES_INTERVALS);
  if (interval === undefined)
    throw new ApiError('MISSING_PARAMETER', `interval is required for ${fn}: one of ${SERIES_INTERVALS.join(', ')}`);
  return {
    fn,
    symbol,
    outputsize: outputsize as OutputSize | undefined,
    interval: interval as SeriesInterval,
    month: readMonth(query.month),
    extendedHours: readBoolean(query.extended_hours, 'extended_hours'),
    adjusted: readBoolean(query.adjusted, 'adjusted'),
  };
}

function readBoolean(raw: string | undefined, name: string): boolean | undefined {
  const value = readEnum(raw, name, ['true', 'false'] as const);
  return value === undefined ? undefined : value === 'true';
}

function required(value: string | undefined, name: string, fn: string): string {
  if (value === undefined || value.trim() === '') throw new ApiError('MISSING_PARAMETER', `${name} is required for ${fn}`);
  return value;
}

function readEnum<T extends string>(raw: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  const value = given(raw, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw new ApiError('INVALID_PARAMETER', `${name} must be one of: ${allowed.join(', ')}`);
  return value as T;
}

function readDatatype(raw: string | undefined): void {
  const value = given(raw, 'datatype')?.toLowerCase();
  if (value === undefined || value === 'json') return;
  const what = value === 'csv' ? 'datatype=csv is not supported' : 'datatype must be json';
  throw new ApiError('INVALID_PARAMETER', `${what}: this service answers JSON only (datatype=json)`);
}
