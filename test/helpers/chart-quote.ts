// A recorded Yahoo one-day chart as GLOBAL_QUOTE, read with the fields the service reads from its stored
// daily series (src/upstreams/yahoo/parse-chart-quote.ts, quoteOf): the day's bar from the chart's own bars,
// the previous close as the chart states it (previousCloseOf). The service never asks for a one-day chart,
// its quote comes from the stored bars (seriesQuote); the tests hold that quote to this one, what Yahoo's
// own chart says at the same instant, and read the recorded charts' fields through it.
import { exchangeDate, type DayBar, quoteOf } from '../../src/upstreams/yahoo/parse-chart-quote.js';
import { type ChartResult, finite, isObject, previousCloseOf, unexpected } from '../../src/upstreams/yahoo/parse-chart.js';
import type { GlobalQuoteBody } from '../../src/wire/alpha-vantage/bodies.js';

/** What a chart was asked for: its `range` ('' for `period1`/`period2`) and its bar `interval`. */
export interface ChartAsk {
  range: string;
  interval: string;
}

/** The chart a quote is read from: one day of daily bars. */
const QUOTE_CHART = { range: '1d', interval: '1d' } as const satisfies ChartAsk;

/**
 * `callerSymbol` is what the caller asked for (`BRK.B`); the chart is of its Yahoo symbol (`BRK-B`), asked
 * as `asked` (QUOTE_CHART unless a test reads a chart asked otherwise).
 */
export function chartQuote(
  { meta, result }: ChartResult,
  yahooSymbol: string,
  callerSymbol: string,
  asked: ChartAsk = QUOTE_CHART,
): GlobalQuoteBody {
  const previous = previousCloseOf(meta, asked.range);
  return quoteOf(meta, yahooSymbol, callerSymbol, (day) => {
    if (previous === undefined) throw unexpected(yahooSymbol, 'chart-no-previous-close', 'a chart without the previous close');
    return { bar: dayBar(result, meta, day, isIntraday(asked.interval)), previous };
  });
}

/** Minutes and hours (`5m`, `1h`); not `1mo`. */
function isIntraday(interval: string): boolean {
  return /^\d+[mh]$/.test(interval);
}

/**
 * The day's bar: of a daily chart the first bar dated `day` in the exchange's zone with an open, a high and
 * a low; of an intraday chart those bars of the day together (first open, highest high, lowest low, summed
 * volume).
 */
function dayBar(result: Record<string, unknown>, meta: Record<string, unknown>, day: string, intraday: boolean): DayBar | undefined {
  const times = Array.isArray(result.timestamp) ? result.timestamp : [];
  const indicators = isObject(result.indicators) ? result.indicators : undefined;
  const quote = Array.isArray(indicators?.quote) && isObject(indicators.quote[0]) ? indicators.quote[0] : {};
  const column = (name: string) => (Array.isArray(quote[name]) ? (quote[name] as unknown[]) : []);
  const [opens, highs, lows, volumes] = [column('open'), column('high'), column('low'), column('volume')];
  let found: DayBar | undefined;
  for (let i = 0; i < times.length; i += 1) {
    const [time, open, high, low, volume] = [finite(times[i]), finite(opens[i]), finite(highs[i]), finite(lows[i]), finite(volumes[i])];
    if (time === undefined || open === undefined || high === undefined || low === undefined) continue;
    if (exchangeDate(time, meta) !== day) continue;
    if (found === undefined) {
      found = { open, high, low, volume };
      if (!intraday) return found;
    } else {
      found.high = Math.max(found.high, high);
      found.low = Math.min(found.low, low);
      if (volume !== undefined) found.volume = (found.volume ?? 0) + volume;
    }
  }
  return found;
}
