// GLOBAL_QUOTE from the price model: the price now, the previous close the price model gives every
// simulator, and today's open, range and volume sampled from the UTC day so far.
import { dayStart, previousClose, priceAt, unit } from '../price-model.js';
import { formatDecimal } from './format.js';
import { DAY_MS, latestTradingDay } from './market-time.js';

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
  const start = dayStart(nowMs);
  const samples = 16;
  const day = Array.from({ length: samples + 1 }, (_, i) => priceAt(symbol, start + ((nowMs - start) * i) / samples));
  const price = ticks(priceAt(symbol, nowMs));
  const open = ticks(day[0] as number);
  const high = Math.max(price, ...day.map(ticks));
  const low = Math.min(price, ...day.map(ticks));
  const prevClose = ticks(previousClose(symbol, nowMs));
  const change = price - prevClose;
  const baseVolume = 200_000 + unit(`volume:${symbol}`) * 40_000_000;
  const volume = Math.max(100, Math.round(baseVolume * ((nowMs - start) / DAY_MS) * (0.6 + unit(`v:${symbol}:${start}`) * 0.8)));
  const fromTicks = (t: number) => formatDecimal(t / 10_000, 4);
  return {
    '01. symbol': symbol,
    '02. open': fromTicks(open),
    '03. high': fromTicks(high),
    '04. low': fromTicks(low),
    '05. price': fromTicks(price),
    '06. volume': String(volume),
    '07. latest trading day': latestTradingDay(nowMs),
    '08. previous close': fromTicks(prevClose),
    '09. change': fromTicks(change),
    '10. change percent': `${formatDecimal(prevClose === 0 ? 0 : (change / prevClose) * 100, 4)}%`,
  };
}
