// The price answers beside the ones the service reads itself: the adjusted series (recorded daily adjusted,
// 2021: prices with as few decimals as they need, "0.0000" dividends, "1.0" split coefficients), bulk quotes
// and bid/ask, index series, the gold and silver spot, options chains and put-call ratios (layouts after the
// documentation's field names; unrecorded). Prices come from the same model as every other simulator.
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS } from '../../core/us-market-time.js';
import { basePrice, previousClose, priceAt, unit } from '../price-model.js';
import { findInstrument } from '../universe.js';
import { barHistory } from './bar-history.js';
import { formatDecimal } from './format.js';
import { INDEX_SYMBOLS } from './listings.js';

/** As many decimals as the value needs, up to four, and at least one (the recorded adjusted series: "719.8", "698.0"). */
export const plain = (value: number) => {
  const text = String(Number(value.toFixed(4)));
  return text.includes('.') ? text : `${text}.0`;
};

const ADJUSTED = {
  TIME_SERIES_DAILY_ADJUSTED: ['daily', 'Daily Time Series with Splits and Dividend Events', 'Time Series (Daily)'],
  TIME_SERIES_WEEKLY_ADJUSTED: ['weekly', 'Weekly Adjusted Prices and Volumes', 'Weekly Adjusted Time Series'],
  TIME_SERIES_MONTHLY_ADJUSTED: ['monthly', 'Monthly Adjusted Prices and Volumes', 'Monthly Adjusted Time Series'],
} as const;

export function adjustedSeries(fn: keyof typeof ADJUSTED, query: URLSearchParams, nowMs: number): unknown {
  const instrument = findInstrument(query.get('symbol') ?? '');
  const outputsize = query.get('outputsize') ?? 'compact';
  if (instrument === undefined || !['compact', 'full'].includes(outputsize)) return invalidApiCall(fn);
  const [interval, information, key] = ADJUSTED[fn];
  const daily = interval === 'daily';
  const bars = barHistory(instrument.symbol, interval, nowMs, daily && outputsize === 'compact' ? 100 : 260)
    .slice(-260)
    .reverse();
  const rows = Object.fromEntries(
    bars.map((b) => {
      const prices = {
        '1. open': plain(b.open),
        '2. high': plain(b.high),
        '3. low': plain(b.low),
        '4. close': plain(b.close),
        '5. adjusted close': plain(b.close),
      };
      const volume = String(Math.round(b.volume));
      return [
        b.key,
        daily
          ? { ...prices, '6. volume': volume, '7. dividend amount': '0.0000', '8. split coefficient': '1.0' }
          : { ...prices, '6. volume': volume, '7. dividend amount': '0.0000' },
      ];
    }),
  );
  const head = { '1. Information': information, '2. Symbol': instrument.symbol, '3. Last Refreshed': bars[0]?.key ?? '' };
  const meta = daily
    ? { ...head, '4. Output Size': outputsize === 'full' ? 'Full size' : 'Compact', '5. Time Zone': 'US/Eastern' }
    : { ...head, '4. Time Zone': 'US/Eastern' };
  return { 'Meta Data': meta, [key]: rows };
}

const symbolsOf = (query: URLSearchParams) =>
  (query.get('symbol') ?? '')
    .split(',')
    .slice(0, 100)
    .map((s) => findInstrument(s))
    .filter((i) => i !== undefined);

export function bulkQuotes(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const instruments = symbolsOf(query);
  if (instruments.length === 0) return invalidApiCall(fn);
  const at = new Date(nowMs).toISOString().slice(0, 23).replace('T', ' ');
  const data = instruments.map((i) => {
    const price = priceAt(i.symbol, nowMs);
    const prev = previousClose(i.symbol, nowMs);
    if (fn === 'REALTIME_BULK_BID_ASK_PRICES')
      return {
        symbol: i.symbol,
        timestamp: at,
        bid_price: formatDecimal(price - 0.01, 2),
        bid_size: '200',
        ask_price: formatDecimal(price + 0.01, 2),
        ask_size: '300',
      };
    return {
      symbol: i.symbol,
      timestamp: at,
      open: formatDecimal(prev, 2),
      high: formatDecimal(price * 1.01, 2),
      low: formatDecimal(prev * 0.99, 2),
      close: formatDecimal(price, 2),
      volume: String(Math.round(unit(`bulk:${i.symbol}`) * 5e7)),
      previous_close: formatDecimal(prev, 2),
      change: formatDecimal(price - prev, 2),
      change_percent: formatDecimal((100 * (price - prev)) / prev, 4),
    };
  });
  return { endpoint: fn === 'REALTIME_BULK_QUOTES' ? 'Realtime Bulk Quotes' : 'Realtime Bulk Bid Ask Prices', message: '', data };
}

export function indexData(query: URLSearchParams, nowMs: number): unknown {
  const symbol = (query.get('symbol') ?? '').toUpperCase();
  const interval = query.get('interval') ?? '';
  if (!INDEX_SYMBOLS.has(symbol) || !['daily', 'weekly', 'monthly'].includes(interval)) return invalidApiCall('INDEX_DATA');
  const seed = symbol === 'SPX' ? 'SPX' : `index:${symbol}`;
  const bars = barHistory(seed, interval as 'daily', nowMs, 100)
    .slice(-100)
    .reverse();
  return {
    symbol,
    interval,
    data: bars.map((b) => ({
      date: b.key,
      open: formatDecimal(b.open, 2),
      high: formatDecimal(b.high, 2),
      low: formatDecimal(b.low, 2),
      close: formatDecimal(b.close, 2),
    })),
  };
}

const METALS: Record<string, string> = { GOLD: 'GOLD', XAU: 'GOLD', SILVER: 'SILVER', XAG: 'SILVER' };

export function goldSilverSpot(query: URLSearchParams, nowMs: number): unknown {
  const metal = METALS[(query.get('symbol') ?? '').toUpperCase()];
  if (metal === undefined) return invalidApiCall('GOLD_SILVER_SPOT');
  const price = priceAt(metal === 'GOLD' ? 'GC=F' : 'SI=F', nowMs);
  return { nominal: metal, timestamp: new Date(nowMs).toISOString().slice(0, 19).replace('T', ' '), price: formatDecimal(price, 4) };
}

/** REALTIME_OPTIONS and HISTORICAL_OPTIONS: a few strikes around the price for the next two monthly expiries. */
export function options(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const instrument = findInstrument(query.get('symbol') ?? '');
  const date = query.get('date');
  if (instrument === undefined || (date !== null && !/^\d{4}-\d{2}-\d{2}$/.test(date))) return invalidApiCall(fn);
  const at = date === null ? nowMs : Date.parse(date) + 21 * 3_600_000;
  const price = priceAt(instrument.symbol, at);
  const step = basePrice(instrument.symbol) > 200 ? 10 : 5;
  const contracts = [1, 2].flatMap((m) => {
    const expiry = new Date(at + m * 30 * DAY_MS).toISOString().slice(0, 10);
    return [-1, 0, 1].flatMap((k) =>
      (['call', 'put'] as const).map((type) => {
        const strike = Math.round(price / step) * step + k * step;
        const intrinsic = Math.max(0, type === 'call' ? price - strike : strike - price);
        const mark = intrinsic + price * 0.02 * m;
        const symbol = instrument.symbol;
        return {
          contractID: `${symbol}${expiry.slice(2).replace(/-/g, '')}${type === 'call' ? 'C' : 'P'}${String(strike * 1000).padStart(8, '0')}`,
          symbol,
          expiration: expiry,
          strike: formatDecimal(strike, 2),
          type,
          last: formatDecimal(mark, 2),
          mark: formatDecimal(mark, 2),
          bid: formatDecimal(mark - 0.05, 2),
          bid_size: '10',
          ask: formatDecimal(mark + 0.05, 2),
          ask_size: '12',
          volume: String(Math.round(unit(`ov:${symbol}:${strike}:${type}`) * 2000)),
          open_interest: String(Math.round(unit(`oi:${symbol}:${strike}:${type}`) * 9000)),
          date: new Date(at).toISOString().slice(0, 10),
        };
      }),
    );
  });
  return { endpoint: fn === 'REALTIME_OPTIONS' ? 'Realtime Options' : 'Historical Options', message: 'success', data: contracts };
}

export function putCallRatio(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const instrument = findInstrument(query.get('symbol') ?? '');
  if (instrument === undefined) return invalidApiCall(fn);
  const ratio = formatDecimal(0.4 + unit(`pcr:${instrument.symbol}:${Math.floor(nowMs / DAY_MS)}`) * 0.9, 4);
  return {
    endpoint: fn === 'REALTIME_PUT_CALL_RATIO' ? 'Realtime Put-Call Ratio' : 'Historical Put-Call Ratio',
    symbol: instrument.symbol,
    ratio,
  };
}
