// Brokers spell share classes their own way ("BRK B" at IBKR, "BRK/B" at Tastytrade); positions are
// reported with the dotted form every other endpoint of this service uses.

export function canonicalStockSymbol(symbol: string): string {
  return symbol
    .trim()
    .toUpperCase()
    .replace(/^([A-Z]+)[ /-]([A-Z])$/, '$1.$2');
}
