// get_indicator and get_price_history: GET /api/provider-a/technical and the price series of /daily and /query
// (TIME_SERIES_*), through the same services and the same reading of their parameters; the latest `limit` rows,
// newest first, as numbers.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import { PRIMARY } from '../../services/data-source.js';
import { technicalQuery } from '../../services/technical-service.js';
import type { TimeSeriesBody } from '../../upstreams/alpha-vantage/parse-time-series.js';
import { INDICATOR_PARAM_NAMES, INDICATORS, INTERVALS, sectionKey, SERIES_TYPES } from '../../wire/alpha-vantage/indicators.js';
import {
  type OutputSize,
  SERIES_INTERVALS,
  type SeriesFunction,
  seriesKey,
  takesOutputSize,
} from '../../wire/alpha-vantage/time-series.js';
import { StringEnum, SymbolParam } from '../schemas.js';
import { DateBound, Freshness, Limit, Num, numberOf, Source } from './schemas.js';
import { answer, tool } from './tool.js';

/** Rows of a series keyed by date or date-time, newest first, values as numbers. */
function rowsOf(series: Record<string, Record<string, string>> | undefined, rename: (key: string) => string = (key) => key) {
  return Object.entries(series ?? {})
    .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
    .map(([time, values]) => ({
      time,
      ...Object.fromEntries(Object.entries(values).map(([key, value]) => [rename(key), numberOf(value)])),
    }));
}

const span = (rows: readonly { time: string }[]) => (rows.length === 0 ? 'none' : `${rows.at(-1)?.time} to ${rows[0]?.time}`);

export const getIndicator = tool({
  name: 'get_indicator',
  title: 'Technical indicator',
  description:
    "The latest values of a technical indicator (RSI, SMA, EMA, MACD, BBANDS and the rest of Alpha Vantage's) for a symbol and interval, newest first. Use it for momentum and trend questions rather than computing them from prices.",
  input: Type.Object(
    {
      symbol: SymbolParam,
      indicator: StringEnum(INDICATORS),
      interval: StringEnum(INTERVALS, { default: 'daily' }),
      time_period: Type.Optional(Type.Integer({ minimum: 2, maximum: 1000, description: 'Bars per value (default 14; 20 for BBANDS).' })),
      series_type: Type.Optional(StringEnum(SERIES_TYPES, { description: 'Price series (default close).' })),
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
  cases: { indicator: 'upper', interval: 'lower', series_type: 'lower' },
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

/** The price intervals, and the TIME_SERIES_* function that holds each. */
const PRICE_INTERVALS = ['daily', 'weekly', 'monthly', ...SERIES_INTERVALS] as const;
const FUNCTION_OF: Record<string, SeriesFunction> = {
  daily: 'TIME_SERIES_DAILY',
  weekly: 'TIME_SERIES_WEEKLY',
  monthly: 'TIME_SERIES_MONTHLY',
};
/** Alpha Vantage's `outputsize=compact`: the latest 100 bars. */
const COMPACT_BARS = 100;
const BAR_NAMES: Record<string, string> = {
  '1. open': 'open',
  '2. high': 'high',
  '3. low': 'low',
  '4. close': 'close',
  '5. volume': 'volume',
};

const Bar = Type.Object(
  { time: Type.String(), open: Num(), high: Num(), low: Num(), close: Num(), volume: Num() },
  { additionalProperties: false },
);

export const getPriceHistory = tool({
  name: 'get_price_history',
  title: 'Price history',
  description:
    'Open, high, low, close and volume bars of a symbol, daily, weekly, monthly or intraday, the latest `limit` first, optionally between `from` and `to`. Use it for past prices, ranges and returns.',
  input: Type.Object(
    {
      symbol: SymbolParam,
      interval: StringEnum(PRICE_INTERVALS, { default: 'daily' }),
      limit: Limit(60, 5000, 'bars'),
      from: DateBound('The oldest bar to include, YYYY-MM-DD.'),
      to: DateBound('The newest bar to include, YYYY-MM-DD.'),
    },
    { additionalProperties: false },
  ),
  cases: { interval: 'lower' },
  output: {
    symbol: Type.String(),
    interval: Type.String(),
    source: Source,
    freshness: Freshness,
    bars: Type.Array(Bar, { description: 'Newest first.' }),
    note: Type.Optional(Type.String({ description: 'Why fewer bars than asked for were read.' })),
  },
  async run({ interval, limit, from, to, ...args }, { deps }) {
    const symbol = args.symbol.toUpperCase();
    const fn = FUNCTION_OF[interval] ?? 'TIME_SERIES_INTRADAY';
    const intraday = fn === 'TIME_SERIES_INTRADAY' ? (interval as (typeof SERIES_INTERVALS)[number]) : undefined;
    const read = async (outputsize: OutputSize | undefined) => {
      const result = await deps.series.get({ fn, symbol, outputsize, interval: intraday });
      const all = rowsOf((result.entry.value as TimeSeriesBody)[seriesKey(fn, intraday)], (key) => BAR_NAMES[key] ?? key);
      const bars = all.filter(
        (bar) => (from === undefined || bar.time >= from) && (to === undefined || bar.time.slice(0, to.length) <= to),
      );
      return { result, all, bars: bars.slice(0, limit) as (typeof Bar)['static'][] };
    };
    // The compact series first (the entry /daily answers from); the whole history only when the request reaches past it.
    let read1 = await read(takesOutputSize(fn) ? 'compact' : undefined);
    let note: string | undefined;
    const oldest = read1.all.at(-1)?.time;
    if (
      takesOutputSize(fn) &&
      read1.all.length >= COMPACT_BARS &&
      read1.bars.length < limit &&
      (from === undefined || (oldest ?? '') > from)
    ) {
      try {
        read1 = await read('full');
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        note = `Only the latest ${COMPACT_BARS} bars: the whole history could not be read (${error.code}: ${error.message}).`;
      }
    }
    const { result, bars } = read1;
    return answer({
      content: { symbol, interval, source: PRIMARY, freshness: result.freshness, bars, ...(note === undefined ? {} : { note }) },
      rows: {
        path: ['bars'],
        hint: (returned) => `Ask with limit=${returned} or less, or a narrower from/to, to get every bar asked for.`,
      },
      text: (c) =>
        `${c.bars.length} ${c.interval} bars of ${c.symbol}, ${span(c.bars)}; last close ${c.bars[0]?.close ?? '?'} (${c.freshness.kind}).${c.note === undefined ? '' : ` ${c.note}`}`,
    });
  },
});
