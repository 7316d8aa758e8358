// get_price_history: the price series of GET /api/provider-a/daily and /query's TIME_SERIES_* functions, through the
// same service; the latest `limit` bars, newest first, as numbers, optionally between `from` and `to`.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import { PRIMARY } from '../../services/data-source.js';
import type { TimeSeriesBody } from '../../upstreams/alpha-vantage/parse-time-series.js';
import {
  type OutputSize,
  SERIES_INTERVALS,
  type SeriesFunction,
  seriesKey,
  takesOutputSize,
} from '../../wire/alpha-vantage/time-series.js';
import { CASE_INSENSITIVE, StringEnum, SymbolParam } from '../schemas.js';
import { DateBound, Freshness, Limit, Num, Source } from './schemas.js';
import { rowsOf, span } from './series-rows.js';
import { answer, tool } from './tool.js';
import { errorFields } from './tool-result.js';

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
      interval: StringEnum(PRICE_INTERVALS, { default: 'daily', [CASE_INSENSITIVE]: true }),
      limit: Limit(60, 5000, 'bars'),
      from: DateBound('The oldest bar to include, YYYY-MM-DD.'),
      to: DateBound('The newest bar to include, YYYY-MM-DD.'),
    },
    { additionalProperties: false },
  ),
  output: {
    symbol: Type.String(),
    interval: Type.String(),
    source: Source,
    freshness: Freshness,
    bars: Type.Array(Bar, { description: 'Newest first.' }),
    note: Type.Optional(Type.String({ description: 'Why fewer bars than asked for were read.' })),
  },
  async run({ interval, limit, from, to, ...args }, { deps, local }) {
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
        // In this caller's words, as an error result would be: an outsider hears no proxy's address.
        const { code, message } = errorFields(error, local());
        note = `Only the latest ${COMPACT_BARS} bars: the whole history could not be read (${code}: ${message}).`;
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
