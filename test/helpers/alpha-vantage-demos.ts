// A call of every documented Alpha Vantage function, as the documentation's own demo URLs make them (the
// demo key's IBM, EUR/USD, BTC…; https://www.alphavantage.co/documentation/, read 2026-11-28 through the scan
// named in src/wire/alpha-vantage/functions.ts), or Alpha Vantage's MCP server's examples for the newer ones.
import { functionSpec } from '../../src/wire/alpha-vantage/functions.js';
import { INDICATORS } from '../../src/wire/alpha-vantage/indicators.js';

const DEMOS: Record<string, Record<string, string>> = {
  TIME_SERIES_INTRADAY: { symbol: 'IBM', interval: '5min' },
  TIME_SERIES_DAILY: { symbol: 'IBM' },
  TIME_SERIES_DAILY_ADJUSTED: { symbol: 'IBM' },
  TIME_SERIES_WEEKLY: { symbol: 'IBM' },
  TIME_SERIES_WEEKLY_ADJUSTED: { symbol: 'IBM' },
  TIME_SERIES_MONTHLY: { symbol: 'IBM' },
  TIME_SERIES_MONTHLY_ADJUSTED: { symbol: 'IBM' },
  GLOBAL_QUOTE: { symbol: 'IBM' },
  REALTIME_BULK_QUOTES: { symbol: 'MSFT,AAPL,IBM' },
  REALTIME_BULK_BID_ASK_PRICES: { symbol: 'MSFT,AAPL,IBM' },
  SYMBOL_SEARCH: { keywords: 'BA' },
  MARKET_STATUS: {},
  REALTIME_OPTIONS: { symbol: 'IBM', require_greeks: 'true' },
  HISTORICAL_OPTIONS: { symbol: 'IBM', date: '2017-11-15' },
  REALTIME_PUT_CALL_RATIO: { symbol: 'IBM' },
  HISTORICAL_PUT_CALL_RATIO: { symbol: 'IBM' },
  NEWS_SENTIMENT: { tickers: 'AAPL' },
  EARNINGS_CALL_TRANSCRIPT: { symbol: 'IBM', quarter: '2024Q1' },
  TOP_GAINERS_LOSERS: {},
  INSIDER_TRANSACTIONS: { symbol: 'IBM' },
  ANALYTICS_FIXED_WINDOW: {
    SYMBOLS: 'AAPL,MSFT,IBM',
    RANGE: '2023-07-01',
    INTERVAL: 'DAILY',
    OHLC: 'close',
    CALCULATIONS: 'MEAN,STDDEV,CORRELATION',
  },
  ANALYTICS_SLIDING_WINDOW: {
    SYMBOLS: 'AAPL,IBM',
    RANGE: '2month',
    INTERVAL: 'DAILY',
    OHLC: 'close',
    WINDOW_SIZE: '20',
    CALCULATIONS: 'MEAN,STDDEV',
  },
  OVERVIEW: { symbol: 'IBM' },
  ETF_PROFILE: { symbol: 'QQQ' },
  DIVIDENDS: { symbol: 'IBM' },
  SPLITS: { symbol: 'IBM' },
  INCOME_STATEMENT: { symbol: 'IBM' },
  BALANCE_SHEET: { symbol: 'IBM' },
  CASH_FLOW: { symbol: 'IBM' },
  SHARES_OUTSTANDING: { symbol: 'MSFT' },
  EARNINGS: { symbol: 'IBM' },
  EARNINGS_ESTIMATES: { symbol: 'IBM' },
  LISTING_STATUS: {},
  EARNINGS_CALENDAR: { horizon: '3month' },
  IPO_CALENDAR: {},
  CURRENCY_EXCHANGE_RATE: { from_currency: 'USD', to_currency: 'JPY' },
  FX_INTRADAY: { from_symbol: 'EUR', to_symbol: 'USD', interval: '5min' },
  FX_DAILY: { from_symbol: 'EUR', to_symbol: 'USD' },
  FX_WEEKLY: { from_symbol: 'EUR', to_symbol: 'USD' },
  FX_MONTHLY: { from_symbol: 'EUR', to_symbol: 'USD' },
  CRYPTO_INTRADAY: { symbol: 'ETH', market: 'USD', interval: '5min' },
  DIGITAL_CURRENCY_DAILY: { symbol: 'BTC', market: 'EUR' },
  DIGITAL_CURRENCY_WEEKLY: { symbol: 'BTC', market: 'EUR' },
  DIGITAL_CURRENCY_MONTHLY: { symbol: 'BTC', market: 'EUR' },
  GOLD_SILVER_SPOT: { symbol: 'GOLD' },
  GOLD_SILVER_HISTORY: { symbol: 'SILVER', interval: 'daily' },
  REAL_GDP: { interval: 'annual' },
  REAL_GDP_PER_CAPITA: {},
  TREASURY_YIELD: { interval: 'monthly', maturity: '10year' },
  FEDERAL_FUNDS_RATE: { interval: 'monthly' },
  CPI: { interval: 'monthly' },
  INDEX_DATA: { symbol: 'SPX', interval: 'daily' },
  INDEX_CATALOG: {},
  CONGRESS_TRADES: { symbol: 'AAPL' },
  POLITICIAN_METADATA: {},
  MAMA: { symbol: 'IBM', interval: 'daily', series_type: 'close', fastlimit: '0.02', slowlimit: '0.01' },
  VWAP: { symbol: 'IBM', interval: '15min' },
  MACDEXT: { symbol: 'IBM', interval: 'daily', series_type: 'open' },
  STOCHF: { symbol: 'IBM', interval: 'daily' },
  STOCHRSI: { symbol: 'IBM', interval: 'daily', time_period: '10', series_type: 'close', fastkperiod: '6', fastdmatype: '1' },
  APO: { symbol: 'IBM', interval: 'daily', series_type: 'close', fastperiod: '10', matype: '1' },
  PPO: { symbol: 'IBM', interval: 'daily', series_type: 'close', fastperiod: '10', matype: '1' },
};

for (const name of ['WTI', 'BRENT', 'NATURAL_GAS', 'COPPER', 'ALUMINUM', 'WHEAT', 'CORN', 'COTTON', 'SUGAR', 'COFFEE', 'ALL_COMMODITIES'])
  DEMOS[name] = { interval: 'monthly' };
for (const name of ['INFLATION', 'RETAIL_SALES', 'DURABLES', 'UNEMPLOYMENT', 'NONFARM_PAYROLL']) DEMOS[name] = {};
// The indicators the service computes: the documentation's demo call shape (IBM, daily, period 10, close),
// with the parameters each takes.
for (const name of INDICATORS) {
  const spec = functionSpec(name);
  const demo: Record<string, string> = { symbol: 'IBM', interval: 'daily' };
  if (spec?.required.includes('time_period')) demo.time_period = '10';
  if (spec?.required.includes('series_type')) demo.series_type = 'close';
  DEMOS[name] ??= demo;
}

/** The demo call of `fn` (function included), or undefined for a function without one. */
export function demoQuery(fn: string): Record<string, string> | undefined {
  const demo = DEMOS[fn];
  return demo === undefined ? undefined : { function: fn, ...demo };
}
