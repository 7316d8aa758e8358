// GET /accounts/{n}/positions?include-marks=true -> data.items[] with quantities and prices as strings
// or numbers, a separate direction ("Long"/"Short"), and a multiplier for derivatives. The market price is
// the mark (how fresh Tastytrade does not say), else the previous close (`close-price`), said so.
import type { AssetClass, BrokerPosition } from '../../broker/broker.js';
import { roundTo, toNumber, toText } from '../../broker/numbers.js';
import { instant } from '../../core/freshness.js';
import { canonicalStockSymbol } from '../../broker/symbols.js';
import { TASTYTRADE_CURRENCY } from './parse-accounts.js';
import { parseItems } from './parse-envelope.js';

const ASSET_CLASSES: Record<string, AssetClass> = {
  equity: 'stock',
  'equity option': 'option',
  future: 'future',
  'future option': 'future_option',
  cryptocurrency: 'crypto',
  bond: 'bond',
  'fixed income security': 'bond',
  warrant: 'warrant',
  index: 'index',
};

/** Our asset class for a Tastytrade instrument type. @internal */
export function tastytradeAssetClass(raw: unknown): AssetClass {
  const type = toText(raw)?.toLowerCase();
  return type === undefined ? 'other' : (ASSET_CLASSES[type] ?? 'other');
}

/** `receivedAt`: when the answer came (ms since epoch), the `asOf` of its prices. */
export function parsePositions(json: unknown, accountId: string, receivedAt: number): BrokerPosition[] {
  const positions: BrokerPosition[] = [];
  const asOf = instant(receivedAt);
  for (const row of parseItems(json, 'positions')) {
    const raw = toText(row.symbol);
    const size = toNumber(row.quantity);
    if (raw === null || size === null) continue;
    const assetClass = tastytradeAssetClass(row['instrument-type']);
    const symbol = assetClass === 'stock' ? canonicalStockSymbol(raw) : raw;
    const quantity = toText(row['quantity-direction'])?.toLowerCase() === 'short' ? -Math.abs(size) : size;
    const multiplier = toNumber(row.multiplier) ?? 1;
    const averageCost = toNumber(row['average-open-price']);
    const mark = toNumber(row.mark) ?? toNumber(row['mark-price']);
    const marketPrice = mark ?? toNumber(row['close-price']);
    const underlying = toText(row['underlying-symbol']);
    positions.push({
      accountId: toText(row['account-number']) ?? accountId,
      symbol,
      description: underlying !== null && underlying !== raw ? `${underlying} ${toText(row['instrument-type']) ?? ''}`.trim() : null,
      assetClass,
      quantity,
      averageCost,
      marketPrice,
      marketValue: marketPrice === null ? null : roundTo(quantity * marketPrice * multiplier, 4),
      unrealizedPnl: marketPrice === null || averageCost === null ? null : roundTo((marketPrice - averageCost) * quantity * multiplier, 4),
      currency: TASTYTRADE_CURRENCY,
      freshness: { kind: mark === null && marketPrice !== null ? 'prior-close' : 'unknown', asOf },
    });
  }
  return positions;
}
