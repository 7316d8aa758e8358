// GLOBAL_QUOTE from the daily series the simulator serves (bar-history.ts): the latest session's bar so far
// (open, high, low, the price, volume, its date) and the previous session's close, as the real quote reads
// like the newest row of TIME_SERIES_DAILY. Before a session opens the latest is the day before.
import { barHistory } from './bar-history.js';
import { formatDecimal } from './format.js';

export type GlobalQuote = Record<
  | '01. symbol'
  | '02. open'
  | '03. high'
  | '04. low'
  | '05. price'
  | '06. volume'
  | '07. latest trading day'
  | '08. previous close'
  | '09. change'
  | '10. change percent',
  string
>;

/** Whole ten-thousandths, so change = price − previous close exactly as the strings read. */
const ticks = (value: number) => Math.round(value * 10_000);

export function globalQuote(symbol: string, nowMs: number): GlobalQuote {
  const bars = barHistory(symbol, 'daily', nowMs, 2);
  const day = bars[bars.length - 1];
  const before = bars[bars.length - 2];
  if (day === undefined || before === undefined) throw new Error('a daily history holds at least two sessions');
  const price = ticks(day.close);
  const prevClose = ticks(before.close);
  const change = price - prevClose;
  const fromTicks = (t: number) => formatDecimal(t / 10_000, 4);
  return {
    '01. symbol': symbol,
    '02. open': fromTicks(ticks(day.open)),
    '03. high': fromTicks(ticks(day.high)),
    '04. low': fromTicks(ticks(day.low)),
    '05. price': fromTicks(price),
    '06. volume': String(day.volume),
    '07. latest trading day': day.key,
    '08. previous close': fromTicks(prevClose),
    '09. change': fromTicks(change),
    '10. change percent': `${formatDecimal(prevClose === 0 ? 0 : (change / prevClose) * 100, 4)}%`,
  };
}
