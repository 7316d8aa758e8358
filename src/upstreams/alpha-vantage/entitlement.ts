// How fresh Alpha Vantage's prices are. Its bodies state no delay; its plan does (documentation, "Quote
// Endpoint" and "TIME_SERIES_INTRADAY"): without the `entitlement` parameter the data "is updated at the
// end of each trading day for all users"; `entitlement=realtime` gives realtime and `entitlement=delayed`
// 15-minute delayed data "during the US trading day", for the US market. So the plan
// (ALPHA_VANTAGE_ENTITLEMENT) and the body's own day decide: a value of the day's regular session, received
// while that session ran, is as live as the plan; anything else (no plan, a symbol of another market, a
// day that is not today's, after the close) is the day's close, dated by the day the body names.
import type { AlphaVantageEntitlement } from '../../core/config.js';
import { type Freshness, instant } from '../../core/freshness.js';
import { easternMinute, inRegularSession, MINUTE_MS } from '../../core/us-market-time.js';
import type { GlobalQuoteBody } from '../../wire/alpha-vantage/bodies.js';
import type { SeriesFunction } from '../../wire/alpha-vantage/time-series.js';
import type { TimeSeriesBody } from './parse-time-series.js';

/** The functions whose data the plan changes, and so the ones the parameter is sent with. */
export const ENTITLED_FUNCTIONS: ReadonlySet<string> = new Set(['GLOBAL_QUOTE', 'TIME_SERIES_INTRADAY']);

/** "15-minute delayed", as the documentation states it. */
const DELAY_MINUTES = 15;
const DAY = /^\d{4}-\d{2}-\d{2}/;

/**
 * Alpha Vantage writes another market's listing with its exchange's suffix (TSCO.LON, SHOP.TRT, IWDA.AS);
 * a US share class has a one-letter one (BRK.B). The plan's realtime and delayed data are US data.
 */
function isUsListing(symbol: string | undefined): boolean {
  return symbol !== undefined && !/\.[A-Z]{2,}$/i.test(symbol);
}

/** As live as the plan when `day` is the US trading day the value was received in, during its regular session. */
function asPlanned(entitlement: AlphaVantageEntitlement, day: string, receivedAt: number): Freshness | undefined {
  const delayMinutes = entitlement === 'delayed' ? DELAY_MINUTES : 0;
  const at = receivedAt - delayMinutes * MINUTE_MS;
  if (!inRegularSession(at) || easternMinute(at).slice(0, 10) !== day) return undefined;
  return entitlement === 'realtime' ? { kind: 'realtime', asOf: instant(at) } : { kind: 'delayed', delayMinutes, asOf: instant(at) };
}

function read(
  day: string | undefined,
  symbol: string | undefined,
  entitlement: AlphaVantageEntitlement | undefined,
  receivedAt: number,
): Freshness {
  const date = day?.match(DAY)?.[0];
  if (date === undefined) return { kind: 'unknown', asOf: instant(receivedAt) };
  const planned = entitlement !== undefined && isUsListing(symbol) ? asPlanned(entitlement, date, receivedAt) : undefined;
  return planned ?? { kind: 'end-of-day', asOf: date };
}

/** GLOBAL_QUOTE received at `receivedAt` (ms since epoch): its day is `07. latest trading day`. */
export function quoteFreshness(body: GlobalQuoteBody, entitlement: AlphaVantageEntitlement | undefined, receivedAt: number): Freshness {
  const quote = body['Global Quote'];
  return read(quote['07. latest trading day'], quote['01. symbol'], entitlement, receivedAt);
}

/**
 * A TIME_SERIES_* body received at `receivedAt`: its day is the one `Last Refreshed` names. Only intraday
 * series follow the plan; daily, weekly and monthly bars end at a day's close.
 */
export function seriesFreshness(
  body: TimeSeriesBody,
  fn: SeriesFunction,
  entitlement: AlphaVantageEntitlement | undefined,
  receivedAt: number,
): Freshness {
  const meta = body['Meta Data'];
  const refreshed = Object.entries(meta).find(([key]) => key.endsWith('Last Refreshed'))?.[1];
  const symbol = Object.entries(meta).find(([key]) => key.endsWith('Symbol'))?.[1];
  return read(refreshed, symbol, ENTITLED_FUNCTIONS.has(fn) ? entitlement : undefined, receivedAt);
}
