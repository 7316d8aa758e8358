// GET /api/provider-a/query?function=…: Alpha Vantage's own API, every function its documentation lists,
// answered through the same services (cache, single flight, budget, fallback, headers) as the REST routes, so
// a client written for Alpha Vantage only changes its base URL. Reading the parameters is the service's
// (services/alpha-vantage-query.ts); this file declares them, one schema for validation and the OpenAPI
// document. The caller's `apikey` is accepted and ignored: never forwarded, and redacted from the request log.
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../../core/errors.js';
import type { AppDeps } from '../../deps.js';
import { handleError } from '../../plugins/app/error-handler.js';
import { sendSourced } from '../../plugins/app/send-cached.js';
import { FUNCTION_NAMES, FUNCTIONS_SOURCE, parameterIndex } from '../../wire/alpha-vantage/functions.js';
import { INTERVALS } from '../../wire/alpha-vantage/indicators.js';
import { SERIES_INTERVALS } from '../../wire/alpha-vantage/time-series.js';
import {
  ANY_CASE,
  CASE_INSENSITIVE,
  errorResponses,
  KeywordsParam,
  NOT_MODIFIED,
  StringEnum,
  type TypeBoxTypeProvider,
} from '../schemas.js';

/** Where every function is listed with its parameters, family, plan and how this service answers it. */
const REFERENCE = 'docs/reference/alpha-vantage-functions.md';

/**
 * Alpha Vantage's own key on an error body, so its clients (which test for these keys rather than the
 * status) report an error: "Information" where Alpha Vantage itself would refuse for limits or plan,
 * "Error Message" for everything else.
 */
function alphaVantageErrorKey(error: ApiError, message: string): Record<string, string> {
  const key = error.status === 429 || error.status === 503 ? 'Information' : 'Error Message';
  return { [key]: message };
}

const text = (description: string, maxLength = 64) => Type.Optional(Type.String({ maxLength, description }));

/** What the service's own functions read; every other parameter is passed on to the functions documenting it. */
const OWN_PARAMETERS: Record<string, TSchema> = {
  symbol: text(
    'The symbol (GLOBAL_QUOTE, series and indicators: letters, digits, ".", "-", "^", "=", case-insensitive); REALTIME_BULK_QUOTES: up to 100, comma-separated.',
    1_100,
  ),
  keywords: Type.Optional(KeywordsParam),
  interval: text(
    `Indicators: ${INTERVALS.join(', ')} (default daily). TIME_SERIES_INTRADAY (required): ${SERIES_INTERVALS.join(', ')}. Forwarded functions: as documented.`,
  ),
  outputsize: text('compact (latest 100) or full, where the function takes it.'),
  datatype: text(
    'json (default) or csv, where the function answers CSV; LISTING_STATUS, EARNINGS_CALENDAR and IPO_CALENDAR answer CSV only.',
  ),
  month: text('YYYY-MM: a month of intraday history (intraday indicators and TIME_SERIES_INTRADAY).'),
  extended_hours: text('TIME_SERIES_INTRADAY: true (default, 04:00-20:00 Eastern) or false (the regular session only).'),
  adjusted: text('TIME_SERIES_INTRADAY: true (default) or false (prices not adjusted for splits and dividends).'),
  time_period: text('Indicators that take one: a whole number from 2 to 1000.'),
  series_type: text('Price-based indicators: close, open, high or low.'),
  apikey: Type.Optional(
    Type.String({ maxLength: 128, description: 'Accepted and ignored: the service uses its own key. Never forwarded, never logged.' }),
  ),
};

const LONG_VALUES = new Set(['tickers', 'SYMBOLS', 'CALCULATIONS', 'topics']);

function forwardedParameter(name: string, functions: readonly string[]): TSchema {
  const takers = functions.length > 6 ? `${functions.length} functions (${REFERENCE})` : functions.join(', ');
  const description = `Passed on to Alpha Vantage for ${takers}, as its documentation describes it.`;
  const maxLength = LONG_VALUES.has(name) ? 1_100 : 256;
  // RANGE is documented given twice (a start and an end).
  if (name === 'RANGE')
    return Type.Optional(
      Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 2 })], { description }),
    );
  return text(description, maxLength);
}

/** Every parameter of every function; the MCP tool alpha_vantage validates its arguments against it too. */
export const Querystring = Type.Object({
  function: StringEnum(FUNCTION_NAMES, {
    description: `Alpha Vantage function: every one its documentation lists (${FUNCTIONS_SOURCE.page}, read ${FUNCTIONS_SOURCE.read}; ${REFERENCE} gives each with its parameters, plan and how this service answers it). ${ANY_CASE} Any other name is Alpha Vantage's own "Invalid API call" answer.`,
    examples: ['GLOBAL_QUOTE'],
    [CASE_INSENSITIVE]: true,
  }),
  ...Object.fromEntries(
    [...parameterIndex()].map(([name, functions]) => [name, OWN_PARAMETERS[name] ?? forwardedParameter(name, functions)]),
  ),
  ...OWN_PARAMETERS,
});

const QueryResponse = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      "The body Alpha Vantage sends for the function: QuoteResponse (GLOBAL_QUOTE), TechnicalResponse (indicators), SearchResponse (SYMBOL_SEARCH), TimeSeriesResponse (TIME_SERIES_*), or the forwarded function's own JSON.",
  },
);

const QueryCsv = Type.String({
  description: "datatype=csv (and the CSV-only functions): Alpha Vantage's CSV, its columns in its order, CRLF line ends.",
});

export function queryRoute(app: FastifyInstance, deps: Pick<AppDeps, 'query'>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/query',
    {
      schema: {
        operationId: 'alphaVantageQuery',
        summary: 'Alpha Vantage-compatible query: every documented function',
        description: `Alpha Vantage's own API with its bodies, JSON and CSV, through this service's cache and budget: point a client's base URL here and drop the key. Quotes, search, the price series and the indicators are answered from the service's own stored and computed data; every other function (fundamentals, FX, crypto, commodities, economy, news, calendars, options…) is forwarded with its documented parameters only and cached for its family's window. The functions, their parameters and plans: ${REFERENCE}. A premium function on a free plan (ALPHA_VANTAGE_PLAN=free) is Alpha Vantage's own premium notice at once, with no call spent (an indicator the service computes is computed). Errors are the usual error body plus Alpha Vantage's own key ("Error Message", or "Information" when the budget is spent, the plan refuses or the provider is unavailable) so Alpha Vantage clients report them.`,
        tags: ['provider-a'],
        querystring: Querystring,
        response: {
          200: {
            description: "The function's answer, as Alpha Vantage gives it.",
            content: { 'application/json': { schema: QueryResponse }, 'text/csv': { schema: QueryCsv } },
          },
          ...NOT_MODIFIED,
          ...errorResponses(400, 401, 403, 404, 429, 502, 503, 504),
        },
      },
      preValidation: async (request) => {
        // Before validation the query is the caller's text: the function is matched trimmed and in any case.
        const query: Record<string, unknown> = request.query;
        query.function = deps.query.canonicalFunction(query.function);
      },
      errorHandler: (error, request, reply) => handleError(error, request, reply, alphaVantageErrorKey),
    },
    async (request, reply) => {
      const { format, ...answer } = await deps.query.answer(request.query);
      return sendSourced(request, reply, answer, { format });
    },
  );
}
