// Alpha Vantage's symbols in Yahoo's convention. Share classes: Alpha Vantage writes `BRK.B`, Yahoo
// `BRK-B`. Exchanges: Alpha Vantage appends its own three-letter code (`TSCO.LON`), Yahoo the market's
// suffix (`TSCO.L`). Symbols that are already Yahoo's own (`^GSPC`, `GC=F`, `EURUSD=X`) or carry a suffix
// we do not know are not mapped: the fallback does not guess at another instrument.

/**
 * Alpha Vantage exchange code -> Yahoo suffix. LON, TRT, DEX and PAR are documented pairs (UPSTREAMS.md);
 * the others are the same exchanges as Alpha Vantage's SYMBOL_SEARCH regions name them.
 * @internal
 */
export const EXCHANGE_SUFFIXES: Readonly<Record<string, string>> = {
  LON: 'L', // London
  TRT: 'TO', // Toronto
  TRV: 'V', // TSX Venture
  DEX: 'DE', // XETRA
  FRK: 'F', // Frankfurt
  PAR: 'PA', // Euronext Paris
  AMS: 'AS', // Euronext Amsterdam
  BRU: 'BR', // Euronext Brussels
  LIS: 'LS', // Euronext Lisbon
  MIL: 'MI', // Borsa Italiana
  STO: 'ST', // Stockholm
  CPH: 'CO', // Copenhagen
  HEL: 'HE', // Helsinki
  OSL: 'OL', // Oslo
  VIE: 'VI', // Vienna
  SAO: 'SA', // B3 São Paulo
  BSE: 'BO', // Bombay
  NSE: 'NS', // National Stock Exchange of India
  SHH: 'SS', // Shanghai
  SHZ: 'SZ', // Shenzhen
};

const BASE = /^[A-Z0-9]+(?:[.-][A-Z])?$/;

/** The Yahoo symbol for an Alpha Vantage symbol (upper case), or undefined when there is no sure mapping. */
export function yahooSymbol(avSymbol: string): string | undefined {
  const symbol = avSymbol.toUpperCase();
  const dot = symbol.lastIndexOf('.');
  const suffix = dot === -1 ? undefined : EXCHANGE_SUFFIXES[symbol.slice(dot + 1)];
  if (suffix !== undefined) {
    const base = symbol.slice(0, dot);
    return BASE.test(base) ? `${base.replace('.', '-')}.${suffix}` : undefined;
  }
  // A US listing: a one-letter share class after a dot (BRK.B) is Yahoo's dash (BRK-B).
  return BASE.test(symbol) ? symbol.replace('.', '-') : undefined;
}
