// A plausible paper portfolio for the simulated gateway: stocks and ETFs from the universe, then option
// lines once an account holds more positions than there are instruments. Deterministic per account. Rows
// are written as a recorded paper account's are (test/fixtures/recorded/ibkr/): type "DEMO", no alias,
// a stock's multiplier 0 and its strike the string "0", an ETF's type "ETF" beside assetClass "STK".
import { priceAt, round, unit } from '../price-model.js';
import { UNIVERSE } from '../universe.js';
import { contractBySymbol } from './ibkr-contracts.js';

export interface SimAccount {
  id: string;
  /** The account holder's name as IBKR titles the account; empty for none. */
  title: string;
  /** "DEMO" for a paper account, as recorded. */
  type: string;
  positions: number;
}

export const DEFAULT_ACCOUNTS: readonly SimAccount[] = [
  { id: 'DU1234567', title: 'Paper trading', type: 'DEMO', positions: 14 },
  { id: 'DU7654321', title: '', type: 'DEMO', positions: 3 },
];

export function accountBody(a: SimAccount): Record<string, unknown> {
  return {
    id: a.id,
    'PrepaidCrypto-Z': false,
    'PrepaidCrypto-P': false,
    brokerageAccess: true,
    accountId: a.id,
    accountVan: a.id,
    accountTitle: a.title,
    displayName: a.title === '' ? a.id : a.title,
    accountAlias: null,
    accountStatus: 1_700_000_000_000,
    currency: 'USD',
    type: a.type,
    tradingType: 'STKNOPT',
    businessType: 'INDEPENDENT',
    ibEntity: 'IBLLC-US',
    faclient: false,
    clearingStatus: 'O',
    covestor: false,
    noClientTrading: false,
    trackVirtualFXPortfolio: true,
    parent: { mmc: [], accountId: '', isMParent: false, isMChild: false, isMultiplex: false },
    desc: a.id,
  };
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/** The i-th position of an account, priced at `now`. */
export function positionBody(account: string, i: number, now: number): Record<string, unknown> {
  const instrument = UNIVERSE[((i + unit(`start:${account}`) * UNIVERSE.length) | 0) % UNIVERSE.length]!;
  const contract = contractBySymbol(instrument.symbol)!;
  const seed = `${account}:${i}`;
  const spot = priceAt(instrument.symbol, now);
  const isOption = i >= UNIVERSE.length;
  const short = unit(`short:${seed}`) < 0.1;
  if (!isOption) {
    const quantity = (1 + Math.floor(unit(`qty:${seed}`) * 300)) * (short ? -1 : 1);
    const avg = round(spot * (0.75 + unit(`avg:${seed}`) * 0.4), 8);
    return positionRow(
      account,
      contract.conid,
      contract.symbol,
      contract.symbol,
      'STK',
      instrument.kind === 'etf' ? 'ETF' : 'COMMON',
      quantity,
      spot,
      avg,
      0,
      0,
    );
  }
  const strike = Math.round(spot * (0.9 + unit(`k:${seed}`) * 0.2));
  const month = MONTHS[((i / UNIVERSE.length) % 12) | 0];
  const right = unit(`cp:${seed}`) < 0.5 ? 'C' : 'P';
  const premium = round(Math.max(0.05, Math.abs(spot - strike) * 0.4 + spot * 0.02), 4);
  const quantity = (1 + Math.floor(unit(`qty:${seed}`) * 10)) * (short ? -1 : 1);
  const desc = `${contract.symbol} ${month}26 ${strike} ${right} [${contract.symbol} 26${month}${strike}${right} 100]`;
  return positionRow(
    account,
    500_000_000 + (i % 100_000_000),
    desc,
    contract.symbol,
    'OPT',
    'COMMON',
    quantity,
    premium,
    round(premium * (0.7 + unit(`avg:${seed}`) * 0.6), 6),
    100,
    strike,
  );
}

function positionRow(
  account: string,
  conid: number,
  desc: string,
  ticker: string,
  assetClass: string,
  type: string,
  quantity: number,
  price: number,
  avgPrice: number,
  multiplier: number,
  strike: number,
): Record<string, unknown> {
  // IBKR writes 0 as the multiplier of a share (recorded): the value is the position times the price.
  const scale = multiplier === 0 ? 1 : multiplier;
  const mktValue = round(quantity * price * scale, 2);
  return {
    acctId: account,
    conid,
    contractDesc: desc,
    position: quantity,
    mktPrice: price,
    mktValue,
    currency: 'USD',
    avgCost: round(avgPrice * scale, 8),
    avgPrice,
    realizedPnl: 0.0,
    unrealizedPnl: round(mktValue - quantity * avgPrice * scale, 2),
    exchs: null,
    expiry: null,
    putOrCall: null,
    multiplier,
    strike: String(strike),
    exerciseStyle: null,
    conExchMap: [],
    assetClass,
    undConid: 0,
    model: '',
    time: 0,
    chineseName: '',
    allExchanges: 'SMART',
    listingExchange: 'NASDAQ',
    countryCode: 'US',
    name: ticker,
    lastTradingDay: null,
    group: null,
    sector: null,
    sectorGroup: null,
    ticker,
    type,
    hasOptions: true,
    fullName: desc,
    isUS: true,
    incrementRules: [{ lowerEdge: 0.0, increment: 0.01 }],
    displayRule: { magnification: 0, displayRuleStep: [{ decimalDigits: 2, lowerEdge: 0.0, wholeDigits: 4 }] },
    isEventContract: false,
    pageSize: 100,
  };
}
