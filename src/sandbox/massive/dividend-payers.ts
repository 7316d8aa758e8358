// The payers the simulated Massive server knows: every dividend-paying instrument of the shared sandbox
// universe, with its yield turned into a cash amount at the symbol's price level, so dividends and prices
// agree across simulators.
import { basePrice } from '../price-model.js';
import { UNIVERSE } from '../universe.js';
import type { DividendPayer } from './dividend-calendar.js';

export const DIVIDEND_PAYERS: readonly DividendPayer[] = Object.freeze(
  UNIVERSE.flatMap((instrument): DividendPayer[] => {
    const { yield: dividendYield, frequency } = instrument.dividend;
    if (frequency === 0 || dividendYield <= 0) return [];
    const annualAmount = Math.round(dividendYield * basePrice(instrument.symbol) * 100) / 100;
    return annualAmount > 0 ? [{ ticker: instrument.symbol, frequency, annualAmount, currency: 'USD' }] : [];
  }),
);
