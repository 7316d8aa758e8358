// GET /portfolio/{accountId}/positions/{pageId}: pages of up to 100; an empty array ends the list. The
// rows say nothing of how fresh their market price is (no time, no availability): unknown, as of receipt.
import { UnreadableAnswerError } from '../../core/errors.js';
import { instant } from '../../core/freshness.js';
import type { AssetClass, BrokerPosition } from '../../broker/broker.js';
import { toNumber, toText } from '../../broker/numbers.js';
import { canonicalStockSymbol } from '../../broker/symbols.js';

export const IBKR_PAGE_SIZE = 100;

const ASSET_CLASSES: Record<string, AssetClass> = {
  STK: 'stock',
  ETF: 'fund',
  FUND: 'fund',
  OPT: 'option',
  FUT: 'future',
  FOP: 'future_option',
  CASH: 'forex',
  CRYPTO: 'crypto',
  BOND: 'bond',
  BILL: 'bond',
  WAR: 'warrant',
  IND: 'index',
};

/** @internal */
export function ibkrAssetClass(raw: unknown): AssetClass {
  const code = toText(raw)?.toUpperCase();
  return code === undefined ? 'other' : (ASSET_CLASSES[code] ?? 'other');
}

/**
 * Whether no page follows: fewer rows than a page holds. Each recorded row states the page size
 * (`pageSize`: 100), so a short page ends the list without asking the paced gateway for an empty one.
 */
export function isLastPositionsPage(json: unknown): boolean {
  if (!Array.isArray(json)) return true;
  const stated = (json[0] as { pageSize?: unknown } | undefined)?.pageSize;
  const size = typeof stated === 'number' && stated > 0 ? stated : IBKR_PAGE_SIZE;
  return json.length < size;
}

/** `receivedAt`: when the answer came (ms since epoch). */
export function parsePositionsPage(json: unknown, accountId: string, receivedAt: number): BrokerPosition[] {
  // Some gateway builds answer an exhausted page with {} instead of [].
  if (json !== null && typeof json === 'object' && !Array.isArray(json) && Object.keys(json).length === 0) return [];
  if (!Array.isArray(json)) throw new UnreadableAnswerError('positions', 'the IBKR gateway sent a positions page that is not an array');
  const positions: BrokerPosition[] = [];
  for (const item of json) {
    if (item === null || typeof item !== 'object') continue;
    const row = item as Record<string, unknown>;
    const quantity = toNumber(row.position);
    const description = toText(row.contractDesc);
    const ticker = toText(row.ticker) ?? description;
    if (quantity === null || ticker === null) continue;
    const assetClass = ibkrAssetClass(row.assetClass);
    const symbol = assetClass === 'stock' || assetClass === 'fund' ? canonicalStockSymbol(ticker) : ticker;
    positions.push({
      accountId: toText(row.acctId) ?? accountId,
      symbol,
      description: description !== null && description !== ticker ? description : null,
      assetClass,
      quantity,
      // avgPrice is per unit; avgCost includes the multiplier for derivatives.
      averageCost: toNumber(row.avgPrice) ?? toNumber(row.avgCost),
      marketPrice: toNumber(row.mktPrice),
      marketValue: toNumber(row.mktValue),
      unrealizedPnl: toNumber(row.unrealizedPnl),
      currency: toText(row.currency),
      freshness: { kind: 'unknown', asOf: instant(receivedAt) },
    });
  }
  return positions;
}
