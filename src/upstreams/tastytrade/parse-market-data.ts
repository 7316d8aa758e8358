// GET /market-data/by-type -> data.items[] with prices as decimal strings (sometimes numbers) and no
// net-change field: change is computed from last and prev-close. Unknown symbols are simply absent.
import type { BrokerQuote } from '../../broker/broker.js';
import { changeFrom, toNumber, toText } from '../../broker/numbers.js';
import { parseItems } from './parse-envelope.js';

export interface MarketDataItem {
  /** Tastytrade's symbol, as sent. */
  symbol: string;
  quote: Omit<BrokerQuote, 'symbol'>;
}

export function parseMarketData(json: unknown): MarketDataItem[] {
  const items: MarketDataItem[] = [];
  for (const row of parseItems(json, 'market-data')) {
    const symbol = toText(row.symbol);
    if (symbol === null) continue;
    const last = toNumber(row.last);
    const { change, changePercent } = changeFrom(last, toNumber(row['prev-close']));
    const updated = toText(row['updated-at']);
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
        updatedAt: updated !== null && !Number.isNaN(Date.parse(updated)) ? new Date(updated).toISOString() : null,
      },
    });
  }
  return items;
}
