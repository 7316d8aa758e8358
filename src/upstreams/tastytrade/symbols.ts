// Our symbols (Yahoo-style: "^VIX", "BTC-USD", "BRK.B") to the instrument types and symbols that
// /market-data/by-type takes, and back.

const INDEX_ALIASES: Record<string, string> = { '^GSPC': 'SPX', '^DJI': 'DJX', '^NDX': 'NDX', '^RUT': 'RUT', '^VIX': 'VIX' };
const CRYPTO = /^(BTC|ETH|LTC|BCH|SOL|DOGE|ADA|AVAX|DOT|LINK|XRP|UNI|MATIC|SHIB|AAVE|XLM)-USD$/;

type MarketDataType = 'equity' | 'index' | 'cryptocurrency';

export interface MarketDataRequest {
  /** Instrument type -> Tastytrade symbols. */
  byType: Record<MarketDataType, string[]>;
  /** Tastytrade symbol (upper-case) -> our symbol. */
  ours: Map<string, string>;
}

export function toMarketDataRequest(symbols: string[]): MarketDataRequest {
  const byType: MarketDataRequest['byType'] = { equity: [], index: [], cryptocurrency: [] };
  const ours = new Map<string, string>();
  for (const symbol of symbols) {
    let type: MarketDataType = 'equity';
    let theirs = symbol.replace('.', '/');
    if (symbol.startsWith('^')) {
      type = 'index';
      theirs = INDEX_ALIASES[symbol] ?? symbol.slice(1);
    } else if (CRYPTO.test(symbol)) {
      type = 'cryptocurrency';
      theirs = symbol.replace('-', '/');
    }
    if (ours.has(theirs.toUpperCase())) continue;
    byType[type].push(theirs);
    ours.set(theirs.toUpperCase(), symbol);
  }
  return { byType, ours };
}

export function marketDataQuery(byType: MarketDataRequest['byType']): string {
  return (Object.entries(byType) as [MarketDataType, string[]][])
    .filter(([, list]) => list.length > 0)
    .map(([type, list]) => `${type}=${list.map(encodeURIComponent).join(',')}`)
    .join('&');
}

/**
 * The dxFeed streamer symbol of one of our symbols, as Tastytrade's instruments give it in `streamer-symbol`:
 * equities and indices as for market data ("BRK/B", "SPX"), crypto on Tastytrade's own exchange code
 * ("BTC/USD:CXTALP", as the recorded DXLink frames name it).
 */
export function toStreamerSymbol(symbol: string): string {
  const { byType } = toMarketDataRequest([symbol]);
  const crypto = byType.cryptocurrency[0];
  if (crypto !== undefined) return `${crypto}:CXTALP`;
  return (byType.index[0] ?? byType.equity[0]) as string;
}
