// The bars both simulated providers serve, from the shared price model, so that Alpha Vantage's series and
// Yahoo's chart of one symbol agree where the real ones agree: the same trades make the same bars.
//  - Prices are in cents, the exchange's tick for these prices: Alpha Vantage prints them with four
//    decimals ("301.2000"), Yahoo sends them as float32 numbers (yahoo-simulator.ts).
//  - An intraday bar is the aggregate of its one-minute bars, as an exchange's bars are: a 60-minute bar is
//    exactly its two 30-minute halves, whichever grid a provider stamps its bars on.
//  - A daily bar is the regular session (open at the opening, close at the closing), cut at `until` while
//    it runs; extended hours never enter it, as they do not enter either provider's daily bars.
import { type Bar, priceAt, round, unit } from './price-model.js';

const MINUTE_MS = 60_000;
/** The regular US session, 6.5 hours: the volume model's unit of a day's trading. */
const SESSION_MS = 23_400_000;
const DAILY_SAMPLES = 8;

export const cents = (price: number): number => round(price, 2);

/** A day's volume around which the symbol's bars vary (the same base the price model's bars had). */
function baseVolume(symbol: string): number {
  return 200_000 + unit(`volume:${symbol}`) * 40_000_000;
}

/** The minute from `start`, cut at `end` (at most a minute later): open, middle and close sampled. */
function minuteBar(symbol: string, start: number, end: number): Bar {
  const open = cents(priceAt(symbol, start));
  const middle = cents(priceAt(symbol, (start + end) / 2));
  const close = cents(priceAt(symbol, end));
  const volume = Math.round(baseVolume(symbol) * ((end - start) / SESSION_MS) * (0.6 + unit(`v:${symbol}:${start}`) * 0.8));
  return { time: start, open, high: Math.max(open, middle, close), low: Math.min(open, middle, close), close, volume };
}

/** The bar of `stepMs` from `start` (its minutes, the last cut at `until`); undefined when no minute of it precedes `until`. */
export function intradayBar(symbol: string, start: number, stepMs: number, until: number): Bar | undefined {
  const end = Math.min(start + stepMs, until);
  let bar: Bar | undefined;
  for (let minute = start; minute < end; minute += MINUTE_MS) {
    const m = minuteBar(symbol, minute, Math.min(minute + MINUTE_MS, end));
    if (bar === undefined) bar = m;
    else {
      bar.high = Math.max(bar.high, m.high);
      bar.low = Math.min(bar.low, m.low);
      bar.close = m.close;
      bar.volume += m.volume;
    }
  }
  return bar;
}

/** A session's daily bar: from `open` to `close`, cut at `until` while the session runs. */
export function sessionBar(symbol: string, open: number, close: number, until: number): Bar {
  const end = Math.max(open, Math.min(close, until));
  const prices = Array.from({ length: DAILY_SAMPLES + 1 }, (_, i) => cents(priceAt(symbol, open + ((end - open) * i) / DAILY_SAMPLES)));
  const share = close > open ? (end - open) / (close - open) : 1;
  const volume = Math.round(baseVolume(symbol) * share * (0.6 + unit(`v:${symbol}:${open}`) * 0.8));
  return {
    time: open,
    open: prices[0] as number,
    high: Math.max(...prices),
    low: Math.min(...prices),
    close: prices[DAILY_SAMPLES] as number,
    volume: Math.max(volume, 100),
  };
}

/** Consecutive bars as one (a week or a month of sessions): the first's open, the last's close. */
export function aggregateBars<T extends Bar>(bars: readonly T[]): Bar | undefined {
  const first = bars[0];
  const last = bars.at(-1);
  if (first === undefined || last === undefined) return undefined;
  return {
    time: first.time,
    open: first.open,
    high: Math.max(...bars.map((b) => b.high)),
    low: Math.min(...bars.map((b) => b.low)),
    close: last.close,
    volume: bars.reduce((sum, b) => sum + b.volume, 0),
  };
}
