// GET /market-data/by-type -> data.items[] with prices as decimal strings (sometimes numbers) and no
// net-change field: change is computed from last and prev-close. Unknown symbols are simply absent.
// Freshness: Tastytrade documents these quotes as real-time ("there is no REST endpoint for delayed
// quotes", developer.tastytrade.com, Market Data), each item says whether its trading is halted
// (`is-trading-halted`) and when it was updated (`updated-at`).
import type { BrokerQuote } from '../../broker/broker.js';
import { changeFrom, toNumber, toText } from '../../broker/numbers.js';
import { type Freshness, instant } from '../../core/freshness.js';
import { parseItems } from './parse-envelope.js';

export interface MarketDataItem {
  /** Tastytrade's symbol, as sent. */
  symbol: string;
  quote: Omit<BrokerQuote, 'symbol'>;
}

/** `receivedAt`: when the answer came, the `asOf` of an item without `updated-at` (ms since epoch). */
export function parseMarketData(json: unknown, receivedAt: number): MarketDataItem[] {
  const items: MarketDataItem[] = [];
  for (const row of parseItems(json, 'market-data')) {
    const symbol = toText(row.symbol);
    if (symbol === null) continue;
    const last = toNumber(row.last);
    const { change, changePercent } = changeFrom(last, toNumber(row['prev-close']));
    const updated = toText(row['updated-at']);
    const updatedAt = updated !== null && !Number.isNaN(Date.parse(updated)) ? new Date(updated).toISOString() : null;
    const freshness: Freshness = {
      kind: row['is-trading-halted'] === true ? 'halted' : 'realtime',
      asOf: updatedAt ?? instant(receivedAt),
    };
    items.push({
      symbol,
      quote: {
        last,
        bid: toNumber(row.bid),
        ask: toNumber(row.ask),
        bidSize: toNumber(row['bid-size']),
        askSize: toNumber(row['ask-size']),
        change,
        changePercent,
        volume: toNumber(row.volume),
        updatedAt,
        freshness,
      },
    });
  }
  return items;
}
