// Physical and digital currencies: CURRENCY_EXCHANGE_RATE, the FX_* series and the crypto series. A rate is
// the ratio of two currencies' values in dollars, each moving slowly around a plausible level, so a pair and
// its inverse agree and a series ends at the exchange rate of the moment. Layouts as recorded: the exchange
// rate (2021, and 2020 with "-" for a missing bid and ask), FX_DAILY (2021), DIGITAL_CURRENCY_DAILY (2021,
// prices in the market's currency and in dollars); the other series follow the same pattern, unrecorded.
import { type Interval, INTRADAY_INTERVALS } from '../../wire/alpha-vantage/indicators.js';
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS, MINUTE_MS } from '../../core/us-market-time.js';
import { basePrice, priceAt, unit } from '../price-model.js';
import { formatDecimal } from './format.js';

/** Name, and units per US dollar (a fiat currency) or dollars per unit (`crypto`). */
const FIAT: Record<string, [string, number]> = {
  USD: ['United States Dollar', 1],
  EUR: ['Euro', 0.92],
  JPY: ['Japanese Yen', 151.2],
  GBP: ['British Pound Sterling', 0.79],
  CHF: ['Swiss Franc', 0.9],
  CAD: ['Canadian Dollar', 1.36],
  AUD: ['Australian Dollar', 1.52],
  CNY: ['Chinese Yuan', 7.23],
  INR: ['Indian Rupee', 83.3],
  HKD: ['Hong Kong Dollar', 7.82],
};
const CRYPTO: Record<string, string> = { BTC: 'Bitcoin', ETH: 'Ethereum', SOL: 'Solana', DOGE: 'Dogecoin', LTC: 'Litecoin' };

function name(code: string): string | undefined {
  return FIAT[code]?.[0] ?? CRYPTO[code];
}

/** Dollars per unit of `code` at `timeMs`: a fifth of a stock's swings for fiat money, the full swings for crypto. */
function dollars(code: string, timeMs: number): number {
  const seed = `ccy:${code}`;
  const move = priceAt(seed, timeMs) / basePrice(seed) - 1;
  if (code in CRYPTO) return (code === 'BTC' || code === 'ETH' ? basePrice(code) : 1 + unit(seed) * 150) * (1 + move);
  return code === 'USD' ? 1 : (1 / (FIAT[code] as [string, number])[1]) * (1 + move / 5);
}

const rate = (from: string, to: string, timeMs: number) => dollars(from, timeMs) / dollars(to, timeMs);

const utc = (ms: number, seconds = true) =>
  new Date(ms)
    .toISOString()
    .slice(0, seconds ? 19 : 16)
    .replace('T', ' ');

export function exchangeRate(query: URLSearchParams, nowMs: number): unknown {
  const from = (query.get('from_currency') ?? '').toUpperCase();
  const to = (query.get('to_currency') ?? '').toUpperCase();
  if (name(from) === undefined || name(to) === undefined) return invalidApiCall('CURRENCY_EXCHANGE_RATE');
  const value = rate(from, to, nowMs);
  // Recorded: a pair quoted without a bid and an ask writes "-" for both (USD/JPY, 2020).
  const quoted = unit(`quoted:${from}${to}:${Math.floor(nowMs / DAY_MS)}`) > 0.1;
  const spread = value * 0.00004;
  return {
    'Realtime Currency Exchange Rate': {
      '1. From_Currency Code': from,
      '2. From_Currency Name': name(from),
      '3. To_Currency Code': to,
      '4. To_Currency Name': name(to),
      '5. Exchange Rate': formatDecimal(value, 8),
      '6. Last Refreshed': utc(nowMs),
      '7. Time Zone': 'UTC',
      '8. Bid Price': quoted ? formatDecimal(value - spread, 8) : '-',
      '9. Ask Price': quoted ? formatDecimal(value + spread, 8) : '-',
    },
  };
}

interface Bar {
  key: string;
  values: [number, number, number, number];
  volume: number;
}

/** Bars of `stepMs` (or calendar weeks and months) ending with the one holding `nowMs`, newest first; FX skips Saturdays. */
function bars(price: (t: number) => number, step: Interval | 'weekly' | 'monthly', nowMs: number, count: number, fx: boolean): Bar[] {
  const out: Bar[] = [];
  const minutes = INTRADAY_INTERVALS.has(step as Interval) ? Number.parseInt(step, 10) : 0;
  let end = nowMs;
  for (let i = 0; out.length < count && i < count * 3; i += 1) {
    const start = minutes > 0 ? Math.floor(end / (minutes * MINUTE_MS)) * minutes * MINUTE_MS : periodStart(step, end);
    const day = new Date(start).getUTCDay();
    if (!(fx && day === 6 && minutes === 0 && step === 'daily')) {
      const points = [0, 0.25, 0.5, 0.75, 1].map((f) => price(start + f * (end - start)));
      const volume = Math.round(unit(`vol:${start}`) * 5_000 + 100);
      const key = minutes > 0 ? utc(start) : new Date(end - (end > start ? 1 : 0)).toISOString().slice(0, 10);
      out.push({ key, values: [points[0] as number, Math.max(...points), Math.min(...points), points[4] as number], volume });
    }
    end = start - 1;
  }
  return out;
}

function periodStart(step: string, ms: number): number {
  const d = new Date(ms);
  if (step === 'monthly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const day = Math.floor(ms / DAY_MS);
  // Weeks run Monday to Sunday (day 0, 1970-01-01, was a Thursday).
  return step === 'weekly' ? (day - ((day + 3) % 7)) * DAY_MS : day * DAY_MS;
}

const SERIES_STEP: Record<string, 'daily' | 'weekly' | 'monthly'> = { DAILY: 'daily', WEEKLY: 'weekly', MONTHLY: 'monthly' };
const OUTPUT = (query: URLSearchParams) => (query.get('outputsize') === 'full' ? 'Full size' : 'Compact');

/** FX_INTRADAY, FX_DAILY, FX_WEEKLY, FX_MONTHLY. */
export function fxSeries(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const from = (query.get('from_symbol') ?? '').toUpperCase();
  const to = (query.get('to_symbol') ?? '').toUpperCase();
  const interval = query.get('interval') ?? '';
  const intraday = fn === 'FX_INTRADAY';
  if (!(from in FIAT) || !(to in FIAT) || (intraday && !INTRADAY_INTERVALS.has(interval as Interval))) return invalidApiCall(fn);
  const step = intraday ? (interval as Interval) : (SERIES_STEP[fn.slice(3)] as 'daily');
  const rows = bars((t) => rate(from, to, t), step, nowMs, query.get('outputsize') === 'full' ? 500 : 100, true);
  const label = intraday ? interval : step[0]?.toUpperCase() + step.slice(1);
  const meta: Record<string, string> = {
    '1. Information': intraday ? `FX Intraday (${interval}) Time Series` : `Forex ${label} Prices (open, high, low, close)`,
    '2. From Symbol': from,
    '3. To Symbol': to,
  };
  const rest = intraday
    ? { 'Last Refreshed': utc(nowMs), Interval: interval, 'Output Size': OUTPUT(query) }
    : step === 'daily'
      ? { 'Output Size': OUTPUT(query), 'Last Refreshed': utc(nowMs) }
      : { 'Last Refreshed': utc(nowMs) };
  Object.entries({ ...rest, 'Time Zone': 'UTC' }).forEach(([key, value], i) => {
    meta[`${i + 4}. ${key}`] = value;
  });
  const series = Object.fromEntries(
    rows.map((b) => [
      b.key,
      Object.fromEntries(['1. open', '2. high', '3. low', '4. close'].map((k, i) => [k, formatDecimal(b.values[i] as number, 5)])),
    ]),
  );
  return { 'Meta Data': meta, [`Time Series FX (${label})`]: series };
}

/** CRYPTO_INTRADAY and DIGITAL_CURRENCY_DAILY, _WEEKLY, _MONTHLY. */
export function cryptoSeries(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const symbol = (query.get('symbol') ?? '').toUpperCase();
  const market = (query.get('market') ?? '').toUpperCase();
  const interval = query.get('interval') ?? '';
  const intraday = fn === 'CRYPTO_INTRADAY';
  if (!(symbol in CRYPTO) || !(market in FIAT) || (intraday && !INTRADAY_INTERVALS.has(interval as Interval))) return invalidApiCall(fn);
  const step = intraday ? (interval as Interval) : (SERIES_STEP[fn.slice('DIGITAL_CURRENCY_'.length)] as 'daily');
  const label = step[0]?.toUpperCase() + step.slice(1);
  const rows = bars((t) => rate(symbol, market, t), step, nowMs, 100, false);
  const head = {
    '2. Digital Currency Code': symbol,
    '3. Digital Currency Name': name(symbol),
    '4. Market Code': market,
    '5. Market Name': name(market),
  };
  if (intraday) {
    const meta = {
      '1. Information': `Crypto Intraday (${interval}) Time Series`,
      ...head,
      '6. Last Refreshed': utc(nowMs),
      '7. Interval': interval,
      '8. Output Size': OUTPUT(query),
      '9. Time Zone': 'UTC',
    };
    const series = Object.fromEntries(rows.map((b) => [b.key, { ...ohlc(b, '', 5), '5. volume': String(b.volume) }]));
    return { 'Meta Data': meta, [`Time Series Crypto (${interval})`]: series };
  }
  const meta = {
    '1. Information': `${label} Prices and Volumes for Digital Currency`,
    ...head,
    '6. Last Refreshed': `${utc(nowMs).slice(0, 10)} 00:00:00`,
    '7. Time Zone': 'UTC',
  };
  const toUsd = (t: number) => rate(market, 'USD', t);
  const series = Object.fromEntries(
    rows.map((b) => {
      const usd: Bar = { ...b, values: b.values.map((v) => v * toUsd(nowMs)) as Bar['values'] };
      const row: Record<string, string> = {};
      for (const [i, field] of ['open', 'high', 'low', 'close'].entries()) {
        row[`${i + 1}a. ${field} (${market})`] = formatDecimal(b.values[i] as number, 8);
        row[`${i + 1}b. ${field} (USD)`] = formatDecimal(usd.values[i] as number, 8);
      }
      const volume = formatDecimal(b.volume / 3.7, 8);
      // Recorded (2021): the market cap repeats the volume, a quirk kept as Alpha Vantage served it.
      return [b.key, { ...row, '5. volume': volume, '6. market cap (USD)': volume }];
    }),
  );
  return { 'Meta Data': meta, [`Time Series (Digital Currency ${label})`]: series };
}

function ohlc(b: Bar, suffix: string, decimals: number): Record<string, string> {
  return Object.fromEntries(
    ['open', 'high', 'low', 'close'].map((f, i) => [`${i + 1}. ${f}${suffix}`, formatDecimal(b.values[i] as number, decimals)]),
  );
}
