// Every documented function the simulator answers beyond the quote, search, series and indicators the service
// reads itself: which module answers which function. A body is the JSON answer, or `{ csv }` for a CSV-only one.
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { cryptoSeries, exchangeRate, fxSeries } from './currencies.js';
import { ECONOMY_FUNCTIONS, economySeries } from './economy.js';
import { FUNDAMENTAL_FUNCTIONS, fundamentals } from './fundamentals.js';
import { analytics, marketStatus, newsSentiment, topGainersLosers } from './intelligence.js';
import { congressTrades, earningsCalendar, indexCatalog, ipoCalendar, listingStatus, politicianMetadata } from './listings.js';
import { adjustedSeries, bulkQuotes, goldSilverSpot, indexData, options, putCallRatio } from './market-data.js';
import { MORE_INDICATORS, moreIndicatorBody } from './more-indicators.js';

type Answer = (fn: string, query: URLSearchParams, nowMs: number) => unknown;

const ANSWERS: Record<string, Answer> = {
  ...Object.fromEntries(FUNDAMENTAL_FUNCTIONS.map((fn) => [fn, fundamentals])),
  ...Object.fromEntries(ECONOMY_FUNCTIONS.map((fn) => [fn, economySeries])),
  ...Object.fromEntries(MORE_INDICATORS.map((fn) => [fn, moreIndicatorBody])),
  CURRENCY_EXCHANGE_RATE: (_fn, q, now) => exchangeRate(q, now),
  ...Object.fromEntries(['FX_INTRADAY', 'FX_DAILY', 'FX_WEEKLY', 'FX_MONTHLY'].map((fn) => [fn, fxSeries])),
  ...Object.fromEntries(
    ['CRYPTO_INTRADAY', 'DIGITAL_CURRENCY_DAILY', 'DIGITAL_CURRENCY_WEEKLY', 'DIGITAL_CURRENCY_MONTHLY'].map((fn) => [fn, cryptoSeries]),
  ),
  NEWS_SENTIMENT: (_fn, q, now) => newsSentiment(q, now),
  TOP_GAINERS_LOSERS: (_fn, _q, now) => topGainersLosers(now),
  MARKET_STATUS: (_fn, _q, now) => marketStatus(now),
  ANALYTICS_FIXED_WINDOW: analytics,
  ANALYTICS_SLIDING_WINDOW: analytics,
  LISTING_STATUS: (_fn, q, now) => listingStatus(q, now),
  EARNINGS_CALENDAR: (_fn, q, now) => earningsCalendar(q, now),
  IPO_CALENDAR: (_fn, _q, now) => ipoCalendar(now),
  INDEX_CATALOG: () => indexCatalog(),
  POLITICIAN_METADATA: () => politicianMetadata(),
  CONGRESS_TRADES: (_fn, q, now) => congressTrades(q, now),
  TIME_SERIES_DAILY_ADJUSTED: (fn, q, now) => adjustedSeries(fn as 'TIME_SERIES_DAILY_ADJUSTED', q, now),
  TIME_SERIES_WEEKLY_ADJUSTED: (fn, q, now) => adjustedSeries(fn as 'TIME_SERIES_WEEKLY_ADJUSTED', q, now),
  TIME_SERIES_MONTHLY_ADJUSTED: (fn, q, now) => adjustedSeries(fn as 'TIME_SERIES_MONTHLY_ADJUSTED', q, now),
  REALTIME_BULK_QUOTES: bulkQuotes,
  REALTIME_BULK_BID_ASK_PRICES: bulkQuotes,
  INDEX_DATA: (_fn, q, now) => indexData(q, now),
  GOLD_SILVER_SPOT: (_fn, q, now) => goldSilverSpot(q, now),
  REALTIME_OPTIONS: options,
  HISTORICAL_OPTIONS: options,
  REALTIME_PUT_CALL_RATIO: putCallRatio,
  HISTORICAL_PUT_CALL_RATIO: putCallRatio,
};

/** The answer to `fn`, or Alpha Vantage's invalid-call body for a function the simulator does not know. */
export function functionAnswer(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const answer = ANSWERS[fn];
  return answer === undefined ? invalidApiCall(fn) : answer(fn, query, nowMs);
}
