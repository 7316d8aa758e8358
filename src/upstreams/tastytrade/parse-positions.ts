// GET /accounts/{n}/positions?include-marks=true -> data.items[] with quantities and prices as strings
// or numbers, a separate direction ("Long"/"Short"), and a multiplier for derivatives.
import type { AssetClass, BrokerPosition } from '../../broker/broker.js';
import { roundTo, toNumber, toText } from '../../broker/numbers.js';
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

export function parsePositions(json: unknown, accountId: string): BrokerPosition[] {
  const positions: BrokerPosition[] = [];
  for (const row of parseItems(json, 'positions')) {
    const raw = toText(row.symbol);
    const size = toNumber(row.quantity);
    if (raw === null || size === null) continue;
    const assetClass = tastytradeAssetClass(row['instrument-type']);
    const symbol = assetClass === 'stock' ? canonicalStockSymbol(raw) : raw;
    const quantity = toText(row['quantity-direction'])?.toLowerCase() === 'short' ? -Math.abs(size) : size;
    const multiplier = toNumber(row.multiplier) ?? 1;
    const averageCost = toNumber(row['average-open-price']);
    const marketPrice = toNumber(row.mark) ?? toNumber(row['mark-price']) ?? toNumber(row['close-price']);
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
    });
  }
  return positions;
}
