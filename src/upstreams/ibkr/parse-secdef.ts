// GET /iserver/secdef/search?symbol=X: every listing whose symbol or name matches, several per company
// (home market, foreign lines, derivatives). The conid arrives as a string here and a number elsewhere.
import { UnreadableAnswerError } from '../../core/errors.js';
import { toNumber, toText } from '../../broker/numbers.js';

export interface SecdefListing {
  conid: number;
  symbol: string;
  name: string | null;
  /** The listing's exchange as the gateway describes it ("NASDAQ", "MEXI"). */
  exchange: string | null;
  secTypes: string[];
}

const US_EXCHANGES = new Set([
  'NASDAQ',
  'NYSE',
  'ARCA',
  'NYSE ARCA',
  'AMEX',
  'NYSE AMERICAN',
  'BATS',
  'CBOE',
  'IEX',
  'PINK',
  'SMART',
  'US',
]);
/** The listings in a search answer ("No symbol found" is the gateway's refusal, read in classify-response.ts). */
export function parseSecdefSearch(json: unknown): SecdefListing[] {
  if (!Array.isArray(json)) throw new UnreadableAnswerError('secdef', 'the IBKR gateway sent a contract search answer that is not a list');
  const listings: SecdefListing[] = [];
  for (const item of json) {
    if (item === null || typeof item !== 'object') continue;
    const row = item as Record<string, unknown>;
    const conid = toNumber(row.conid);
    const symbol = toText(row.symbol);
    if (conid === null || !Number.isInteger(conid) || conid <= 0 || symbol === null) continue;
    const sections = Array.isArray(row.sections) ? row.sections : [];
    const secTypes = sections
      .map((s) => (s !== null && typeof s === 'object' ? toText((s as Record<string, unknown>).secType) : null))
      .filter((s): s is string => s !== null);
    listings.push({ conid, symbol, name: toText(row.companyName), exchange: exchangeOf(row), secTypes });
  }
  return listings;
}

function exchangeOf(row: Record<string, unknown>): string | null {
  const description = toText(row.description);
  if (description !== null) return description.toUpperCase();
  const header = toText(row.companyHeader);
  const dash = header?.lastIndexOf(' - ') ?? -1;
  return header !== null && header !== undefined && dash >= 0
    ? header
        .slice(dash + 3)
        .trim()
        .toUpperCase()
    : null;
}

/** IBKR writes share classes with a space ("BRK B") where tickers elsewhere use "." or "-". */
function sameSymbol(a: string, b: string): boolean {
  const norm = (s: string) => s.toUpperCase().replace(/[.\-/ ]/g, ' ');
  return norm(a) === norm(b);
}

/**
 * The listing a quote for `symbol` should use: the exact symbol's US stock listing, else its stock
 * listing anywhere, else an index of that name. Fuzzy matches (other symbols) never count.
 */
export function pickListing(listings: SecdefListing[], symbol: string): SecdefListing | undefined {
  const exact = listings.filter((l) => sameSymbol(l.symbol, symbol));
  const stocks = exact.filter((l) => l.secTypes.includes('STK'));
  return (
    stocks.find((l) => l.exchange !== null && US_EXCHANGES.has(l.exchange)) ?? stocks[0] ?? exact.find((l) => l.secTypes.includes('IND'))
  );
}
