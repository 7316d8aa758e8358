// Contract ids and listings the simulated gateway knows: every universe instrument (a few with their real
// conids), each also listed on a foreign exchange first so that a client must pick the US line, plus
// the common indices.
import { hash } from '../price-model.js';
import { findInstrument, UNIVERSE } from '../universe.js';

export interface SimContract {
  conid: number;
  /** IBKR's spelling: share classes with a space ("BRK B"). */
  symbol: string;
  /** Our canonical symbol, for prices. */
  priceSymbol: string;
  name: string;
  exchange: string;
  secType: 'STK' | 'IND';
}

const REAL_CONIDS: Record<string, number> = {
  AAPL: 265598,
  MSFT: 272093,
  SPY: 756733,
  IBM: 8314,
  AMZN: 3691937,
  TSLA: 76792991,
  NVDA: 4815747,
  QQQ: 320227571,
};
const INDICES: readonly (readonly [string, string, number, string])[] = [
  ['SPX', 'S&P 500 Stock Index', 416904, '^GSPC'],
  ['VIX', 'CBOE Volatility Index', 13455763, '^VIX'],
  ['NDX', 'NASDAQ 100 Stock Index', 416843, '^IXIC'],
];

const byConid = new Map<number, SimContract>();
const bySymbol = new Map<string, SimContract>();

function add(contract: SimContract): void {
  let { conid } = contract;
  while (byConid.has(conid)) conid += 1;
  const final = { ...contract, conid };
  byConid.set(conid, final);
  bySymbol.set(final.priceSymbol, final);
}

for (const symbol of Object.keys(REAL_CONIDS)) {
  const i = findInstrument(symbol);
  if (i !== undefined)
    add({
      conid: REAL_CONIDS[symbol] as number,
      symbol,
      priceSymbol: symbol,
      name: i.name.toUpperCase(),
      exchange: i.exchange,
      secType: 'STK',
    });
}
for (const i of UNIVERSE) {
  if (bySymbol.has(i.symbol)) continue;
  add({
    conid: 100_000 + (hash(`conid:${i.symbol}`) % 700_000_000),
    symbol: i.symbol.replace('.', ' '),
    priceSymbol: i.symbol,
    name: i.name.toUpperCase(),
    exchange: i.exchange,
    secType: 'STK',
  });
}
for (const [symbol, name, conid, priceSymbol] of INDICES)
  add({ conid, symbol, priceSymbol, name: name.toUpperCase(), exchange: 'CBOE', secType: 'IND' });

export function contractByConid(conid: number): SimContract | undefined {
  return byConid.get(conid);
}

/** The contract for a symbol in any spelling ("BRK.B", "BRK B", "spx"). */
export function contractBySymbol(symbol: string): SimContract | undefined {
  const upper = symbol.trim().toUpperCase();
  const index = [...byConid.values()].find((c) => c.secType === 'IND' && c.symbol === upper);
  return index ?? bySymbol.get(findInstrument(upper)?.symbol ?? upper);
}

/**
 * The body of GET /iserver/secdef/search for a symbol: the foreign line first, then the US one. The keys of
 * IBKR's documented examples (no fop/opt/war beside the sections).
 */
export function secdefListings(symbol: string): Record<string, unknown>[] {
  const c = contractBySymbol(symbol);
  if (c === undefined) return [];
  const listing = (conid: number, exchange: string, sections: Record<string, string>[]) => ({
    conid: String(conid),
    companyHeader: `${c.name} - ${exchange}`,
    companyName: c.name,
    symbol: c.symbol,
    description: exchange,
    restricted: null,
    sections,
  });
  if (c.secType === 'IND') {
    return [
      listing(c.conid, c.exchange, [
        { secType: 'IND', exchange: 'CBOE;' },
        { secType: 'OPT', months: 'JUN26;JUL26;AUG26', exchange: 'SMART;CBOE' },
      ]),
    ];
  }
  return [
    listing(1 + (hash(`mexi:${c.symbol}`) % 700_000_000), 'MEXI', [{ secType: 'STK' }]),
    listing(c.conid, c.exchange, [
      { secType: 'STK' },
      { secType: 'OPT', months: 'JUN26;JUL26;AUG26', exchange: 'SMART;AMEX;CBOE' },
      { secType: 'WAR', months: 'JUN26', exchange: 'FWB' },
    ]),
  ];
}
