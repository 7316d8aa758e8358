// The market overview reads its instruments through this interface, so its source (Yahoo's chart API
// today) can be replaced by configuration without touching the route, the cache or the formatting.
import type { Freshness } from '../core/freshness.js';

export const INSTRUMENT_CATEGORIES = ['index', 'commodity', 'crypto', 'equity', 'fund', 'currency'] as const;
export type InstrumentCategory = (typeof INSTRUMENT_CATEGORIES)[number];

/** One instrument as a source reports it; numbers are unrounded, formatting happens at the edge. */
export interface InstrumentSnapshot {
  symbol: string;
  price: number;
  /** The close of the previous trading day, the base of the daily change. */
  previousClose: number;
  currency: string | null;
  name: string | null;
  category: InstrumentCategory;
  /** ISO-8601 time of the price. */
  asOf: string;
  /** How fresh the price is, as the source says (core/freshness.ts). */
  freshness: Freshness;
}

export interface OverviewSource {
  /** Stable id, used in cache keys, health and budgets (e.g. "yahoo"). */
  readonly name: string;
  /** Throws an ApiError (SYMBOL_NOT_FOUND, UPSTREAM_ERROR, QUOTA_EXHAUSTED, ...) when it cannot answer. */
  fetchInstrument(symbol: string): Promise<InstrumentSnapshot>;
  close(): Promise<void>;
}

/** The category a symbol's shape suggests, for sources that do not say (`^GSPC`, `GC=F`, `BTC-USD`, `EURUSD=X`). */
export function categoryFromSymbol(symbol: string): InstrumentCategory {
  const s = symbol.toUpperCase();
  if (s.startsWith('^')) return 'index';
  if (s.endsWith('=F')) return 'commodity';
  if (s.endsWith('=X')) return 'currency';
  if (/^[A-Z0-9]{2,10}-(USD|USDT|EUR|BTC|ETH)$/.test(s)) return 'crypto';
  return 'equity';
}
