// One broker interface, whichever brokerage is behind it: the routes only ever see these shapes.
import type { BrokerKind } from '../core/config.js';
import { type Freshness, instant } from '../core/freshness.js';

export type BrokerStatus = 'connected' | 'unauthenticated' | 'disconnected' | 'not_configured';

export interface BrokerHealth {
  broker: BrokerKind;
  status: BrokerStatus;
  authenticated: boolean;
  connected: boolean;
  checkedAt: string;
  latencyMs: number;
  /** What the operator should do, in words; never a credential. */
  message: string;
  /** The outbound proxy the broker is reached through, host:port; absent when it is reached directly. */
  proxy?: string;
  /** The check met an answer it could not read (see driftOf): for the health record, never sent to callers. */
  unreadable?: { reason: string; message: string };
}

export interface BrokerAccount {
  accountId: string;
  name: string;
  /** The broker's account type, e.g. "INDIVIDUAL" or "Roth IRA". */
  type: string | null;
  currency: string | null;
}

export const ASSET_CLASSES = [
  'stock',
  'option',
  'future',
  'future_option',
  'forex',
  'crypto',
  'bond',
  'fund',
  'warrant',
  'index',
  'other',
] as const;
export type AssetClass = (typeof ASSET_CLASSES)[number];

export interface BrokerPosition {
  accountId: string;
  symbol: string;
  /** The broker's own description of the contract (e.g. an option's expiry and strike), when it differs from the symbol. */
  description: string | null;
  assetClass: AssetClass;
  /** Signed: negative for a short position. */
  quantity: number;
  /** Average price paid per unit, in price terms (not multiplied by the contract multiplier). */
  averageCost: number | null;
  marketPrice: number | null;
  marketValue: number | null;
  unrealizedPnl: number | null;
  currency: string | null;
  /** How fresh `marketPrice` is, as far as the broker says (often: unknown). */
  freshness: Freshness;
}

export interface BrokerQuote {
  symbol: string;
  last: number | null;
  bid: number | null;
  ask: number | null;
  bidSize: number | null;
  askSize: number | null;
  change: number | null;
  changePercent: number | null;
  volume: number | null;
  updatedAt: string | null;
  /** How fresh the values are, as the broker's answer says (core/freshness.ts). */
  freshness: Freshness;
}

export interface BrokerQuotes {
  quotes: Record<string, BrokerQuote>;
  /** Requested symbols the broker does not know. */
  missing: string[];
}

export interface Broker {
  readonly kind: BrokerKind;
  /** Never throws: every failure is a state in the report. */
  health(): Promise<BrokerHealth>;
  accounts(): Promise<BrokerAccount[]>;
  /** Across every account and every page. */
  positions(): Promise<BrokerPosition[]>;
  /** `symbols` are upper-case and distinct. */
  quotes(symbols: string[]): Promise<BrokerQuotes>;
  /** Starts session care (keep-alive); a no-op for brokers without a session to keep. */
  start(): void;
  close(): Promise<void>;
}

/** A symbol the broker knows but sent no values for (yet), answered at `at`. */
export function emptyQuote(symbol: string, at: number): BrokerQuote {
  return {
    symbol,
    last: null,
    bid: null,
    ask: null,
    bidSize: null,
    askSize: null,
    change: null,
    changePercent: null,
    volume: null,
    updatedAt: null,
    freshness: { kind: 'unknown', asOf: instant(at) },
  };
}
