// get_indicator: GET /api/provider-a/technical, through the same service and the same reading of its parameters;
// the latest `limit` values, newest first, as numbers.
import { Type } from '@sinclair/typebox';
import { technicalQuery } from '../../services/technical-service.js';
import { INDICATOR_PARAM_NAMES, INDICATORS, INTERVALS, sectionKey, SERIES_TYPES } from '../../wire/alpha-vantage/indicators.js';
import { CASE_INSENSITIVE, StringEnum, SymbolParam } from '../schemas.js';
import { Limit, Num, Source } from './schemas.js';
import { rowsOf, span } from './series-rows.js';
import { answer, tool } from './tool.js';

export const getIndicator = tool({
  name: 'get_indicator',
  title: 'Technical indicator',
  description:
    "The latest values of a technical indicator (RSI, SMA, EMA, MACD, BBANDS and the rest of Alpha Vantage's) for a symbol and interval, newest first. Use it for momentum and trend questions rather than computing them from prices.",
  input: Type.Object(
    {
      symbol: SymbolParam,
      indicator: StringEnum(INDICATORS, { [CASE_INSENSITIVE]: true }),
      interval: StringEnum(INTERVALS, { default: 'daily', [CASE_INSENSITIVE]: true }),
      time_period: Type.Optional(Type.Integer({ minimum: 2, maximum: 1000, description: 'Bars per value (default 14; 20 for BBANDS).' })),
      series_type: Type.Optional(StringEnum(SERIES_TYPES, { description: 'Price series (default close).', [CASE_INSENSITIVE]: true })),
      month: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'YYYY-MM: a month of intraday history.' })),
      parameters: Type.Optional(
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
          propertyNames: { enum: INDICATOR_PARAM_NAMES },
          description: "Other parameters of the indicator, by Alpha Vantage's names, e.g. { fastperiod: 12 }.",
        }),
      ),
      limit: Limit(30, 5000, 'values'),
    },
    { additionalProperties: false },
  ),
  output: {
    symbol: Type.String(),
    indicator: Type.String(),
    interval: Type.String(),
    source: Source,
    meta: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { description: "Alpha Vantage's Meta Data." }),
    values: Type.Array(Type.Object({ time: Type.String() }, { additionalProperties: Num() }), {
      description: 'Newest first: time, then each value by name (RSI; MACD, MACD_Signal, MACD_Hist).',
    }),
  },
  async run({ parameters, limit, ...named }, { deps }) {
    // Every parameter as text, as the query string gives it to the route.
    const given = Object.fromEntries(Object.entries({ ...parameters, ...named }).map(([name, value]) => [name, String(value)]));
    const query = technicalQuery({ ...given, symbol: named.symbol, indicator: named.indicator, interval: named.interval });
    const { result, source } = await deps.technical.get(query);
    const body = result.entry.value as Record<string, Record<string, Record<string, string>>>;
    const values = rowsOf(body[sectionKey(query.indicator)]).slice(0, limit);
    return answer({
      content: {
        symbol: query.symbol,
        indicator: query.indicator,
        interval: query.interval,
        source,
        meta: body['Meta Data'] ?? {},
        values,
      },
      rows: { path: ['values'], hint: (returned) => `Ask with limit=${returned} or less to get every value asked for.` },
      text: (c) => {
        const { time, ...latest } = c.values[0] ?? {};
        const values = Object.entries(latest).map(([name, value]) => `${name} ${value}`);
        return `${c.indicator} of ${c.symbol} (${c.interval}), ${c.values.length} values, ${span(c.values)}, from ${c.source}.${time === undefined ? '' : ` Latest (${time}): ${values.join(', ')}.`}`;
      },
    });
  },
});
