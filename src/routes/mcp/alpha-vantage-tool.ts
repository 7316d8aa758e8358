// alpha_vantage: GET /api/provider-a/query, any function of the Alpha Vantage drop-in with its parameters, checked
// against the route's own parameter schema and answered by the same service: the same function list, premium
// rules, owned answers (quotes, series, indicators, search) and forwarded families, each cached as the route's.
import { Type } from '@sinclair/typebox';
import { FUNCTION_NAMES } from '../../wire/alpha-vantage/functions.js';
import { Querystring } from '../provider-a/query.js';
import { CASE_INSENSITIVE, StringEnum } from '../schemas.js';
import { argumentsOf } from './arguments.js';
import { Freshness, Source } from './schemas.js';
import { answer, tool } from './tool.js';

/** The largest collection of an answer (a series keyed by date, a list of articles, CSV lines): where it is cut. */
function rowsPath(data: unknown): string[] | undefined {
  if (typeof data === 'string') return ['data'];
  let best: string | undefined;
  let most = 1;
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    const count = Array.isArray(value) ? value.length : value !== null && typeof value === 'object' ? Object.keys(value).length : 0;
    if (count > most) [best, most] = [key, count];
  }
  return best === undefined ? undefined : ['data', best];
}

export const alphaVantage = tool({
  name: 'alpha_vantage',
  title: 'Any Alpha Vantage function',
  description:
    "Any function of Alpha Vantage's API (fundamentals, earnings, FX, crypto, commodities, economic indicators, news and the rest) with its own parameters, answered as Alpha Vantage answers it. Use the other tools for quotes, history and indicators; this one for everything else.",
  input: Type.Object(
    {
      function: StringEnum(FUNCTION_NAMES, {
        [CASE_INSENSITIVE]: true,
        description: 'The function, e.g. OVERVIEW, EARNINGS, FX_DAILY, NEWS_SENTIMENT (all: docs/reference/alpha-vantage-functions.md).',
      }),
      parameters: Type.Optional(
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Array(Type.String())]), {
          description: 'Its parameters as Alpha Vantage documents them, e.g. { "symbol": "IBM" }; no apikey needed.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  output: {
    function: Type.String(),
    format: StringEnum(['json', 'csv'] as const),
    source: Source,
    freshness: Type.Optional(Freshness),
    data: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String()], {
      description: "Alpha Vantage's answer (CSV as text).",
    }),
  },
  async run({ function: fn, parameters }, { deps }) {
    // The parameters as the query string gives them to the route, checked against its own schema.
    const given = Object.entries(parameters ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value : String(value)]);
    const query = argumentsOf<Record<string, unknown>>(Querystring, { ...Object.fromEntries(given), function: fn });
    const { result, source, format } = await deps.query.answer(query);
    const data = result.entry.value as Record<string, unknown> | string;
    const path = rowsPath(data);
    return answer({
      content: { function: fn, format, source, ...(result.freshness === undefined ? {} : { freshness: result.freshness }), data },
      rows:
        path === undefined
          ? undefined
          : {
              path,
              hint: () =>
                'Ask for less: outputsize=compact, a shorter range, fewer symbols or a limit where the function takes one; get_price_history and get_indicator take limit, from and to.',
            },
      text: (c) => {
        const what = typeof c.data === 'string' ? 'CSV' : `JSON with ${Object.keys(c.data).slice(0, 8).join(', ')}`;
        return `${c.function} from ${c.source}: ${what}${c.freshness === undefined ? '' : `, ${c.freshness.kind} as of ${c.freshness.asOf}`}.`;
      },
    });
  },
});
