// One overview value as the API shows it: `toFixed(2)` strings (negatives start with "-", positives carry
// no "+", changePercent ends in "%"), plus what the source says about the instrument.
import type { Freshness } from '../core/freshness.js';
import type { InstrumentCategory, InstrumentSnapshot } from '../upstreams/overview-source.js';

export interface OverviewEntry {
  price: string;
  change: string;
  changePercent: string;
  name?: string;
  category: InstrumentCategory;
  currency?: string;
  asOf: string;
  freshness: Freshness;
}

export function formatEntry(snapshot: InstrumentSnapshot): OverviewEntry {
  const change = snapshot.price - snapshot.previousClose;
  const percent = snapshot.previousClose === 0 ? 0 : (change / snapshot.previousClose) * 100;
  // Built in the documented field order, leaving out what the source does not know.
  return {
    price: fixed2(snapshot.price),
    change: fixed2(change),
    changePercent: `${fixed2(percent)}%`,
    ...(snapshot.name !== null ? { name: snapshot.name } : {}),
    category: snapshot.category,
    ...(snapshot.currency !== null ? { currency: snapshot.currency } : {}),
    asOf: snapshot.asOf,
    freshness: snapshot.freshness,
  };
}

/** `toFixed(2)` without "-0.00": a change that rounds to nothing is not negative. @internal */
export function fixed2(value: number): string {
  const text = value.toFixed(2);
  return text === '-0.00' ? '0.00' : text;
}
