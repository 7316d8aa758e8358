// What the simulated Yahoo chart server knows about each symbol: the overview instruments (indices,
// futures, crypto) with Yahoo's own names and types, plus every stock and ETF of the sandbox universe.
import { findInstrument } from '../universe.js';

export type Session = 'us-equity' | 'futures' | 'always';

export interface ChartInstrument {
  symbol: string;
  /** The symbol the shared price model knows it by (`BRK.B` for Yahoo's `BRK-B`). */
  priceKey: string;
  shortName: string;
  longName: string;
  instrumentType: 'INDEX' | 'FUTURE' | 'CRYPTOCURRENCY' | 'EQUITY' | 'ETF';
  currency: string;
  exchangeName: string;
  fullExchangeName: string;
  exchangeTimezoneName: string;
  session: Session;
}

const index = (symbol: string, shortName: string, longName: string, exchangeName: string, fullExchangeName: string): ChartInstrument => ({
  symbol,
  priceKey: symbol,
  shortName,
  longName,
  instrumentType: 'INDEX',
  currency: 'USD',
  exchangeName,
  fullExchangeName,
  exchangeTimezoneName: 'America/New_York',
  session: 'us-equity',
});

const future = (symbol: string, shortName: string, longName: string, exchangeName: string, fullExchangeName: string): ChartInstrument => ({
  symbol,
  priceKey: symbol,
  shortName,
  longName,
  instrumentType: 'FUTURE',
  currency: 'USD',
  exchangeName,
  fullExchangeName,
  exchangeTimezoneName: 'America/New_York',
  session: 'futures',
});

const crypto = (symbol: string, shortName: string): ChartInstrument => ({
  symbol,
  priceKey: symbol,
  shortName,
  longName: shortName,
  instrumentType: 'CRYPTOCURRENCY',
  currency: 'USD',
  exchangeName: 'CCC',
  fullExchangeName: 'CCC',
  exchangeTimezoneName: 'UTC',
  session: 'always',
});

const MARKET_INSTRUMENTS: readonly ChartInstrument[] = [
  index('^GSPC', 'S&P 500', 'S&P 500', 'SNP', 'SNP'),
  index('^DJI', 'Dow Jones Industrial Average', 'Dow Jones Industrial Average', 'DJI', 'DJI'),
  index('^IXIC', 'NASDAQ Composite', 'NASDAQ Composite', 'NIM', 'Nasdaq GIDS'),
  index('^RUT', 'Russell 2000', 'Russell 2000', 'WCB', 'Chicago Options'),
  index('^VIX', 'CBOE Volatility Index', 'CBOE Volatility Index', 'CBO', 'Cboe Indices'),
  future('GC=F', 'Gold', 'Gold Dec 26', 'CMX', 'COMEX'),
  future('SI=F', 'Silver', 'Silver Dec 26', 'CMX', 'COMEX'),
  future('CL=F', 'Crude Oil', 'Crude Oil Jan 27', 'NYM', 'NY Mercantile'),
  future('NG=F', 'Natural Gas', 'Natural Gas Jan 27', 'NYM', 'NY Mercantile'),
  crypto('BTC-USD', 'Bitcoin USD'),
  crypto('ETH-USD', 'Ethereum USD'),
];

const BY_SYMBOL = new Map(MARKET_INSTRUMENTS.map((i) => [i.symbol, i]));

/** The instrument for a Yahoo symbol (case-insensitive; share classes as `BRK-B`), or undefined. */
export function chartInstrument(symbol: string): ChartInstrument | undefined {
  const upper = symbol.toUpperCase();
  const market = BY_SYMBOL.get(upper);
  if (market !== undefined) return market;
  const listed = findInstrument(upper);
  if (listed === undefined) return undefined;
  const exchange =
    listed.exchange === 'NASDAQ'
      ? { exchangeName: 'NMS', fullExchangeName: 'NasdaqGS' }
      : listed.exchange === 'NYSE'
        ? { exchangeName: 'NYQ', fullExchangeName: 'NYSE' }
        : { exchangeName: 'PCX', fullExchangeName: 'NYSEArca' };
  return {
    symbol: listed.symbol.replace('.', '-'),
    priceKey: listed.symbol,
    shortName: listed.name,
    longName: listed.name,
    instrumentType: listed.kind === 'etf' ? 'ETF' : 'EQUITY',
    currency: 'USD',
    ...exchange,
    exchangeTimezoneName: 'America/New_York',
    session: 'us-equity',
  };
}
