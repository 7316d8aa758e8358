// A broker's own real-time quote feed (IBKR's Client Portal websocket, Tastytrade's DXLink), behind one
// interface: the caller says which symbols it needs, the feed keeps them subscribed upstream (resubscribing
// across reconnects and expiries) and reports each symbol's merged quote as ticks arrive. Partial frames are
// merged inside the feed: a listener always receives the whole quote known so far.
import type { BrokerKind } from '../core/config.js';
import type { BrokerQuote } from './broker.js';

export interface StreamedQuote {
  /** Upper-case, as the REST route's symbols. */
  symbol: string;
  /** Every field known so far, merged from all the frames since the subscription began; updatedAt is the tick's time. */
  quote: BrokerQuote;
  /** When the broker stamped this tick (ms since epoch), or when it was received if the broker sends no time. */
  tickAt: number;
  /** Every field a snapshot would give is present (else a snapshot completes it). */
  complete: boolean;
}

export type QuoteStreamState = 'off' | 'connecting' | 'connected' | 'unauthenticated' | 'disconnected';

export interface QuoteStreamStatus {
  broker: BrokerKind;
  state: QuoteStreamState;
  /** Symbols subscribed upstream right now. */
  subscriptions: number;
  /** Age of the newest tick, or null before the first. */
  lastTickAgeMs: number | null;
  reconnects: number;
  /** What went wrong last, in words for an operator; never a token or session id. */
  lastError: string | null;
}

export interface BrokerQuoteStream {
  readonly broker: BrokerKind;
  /** Symbols some caller needs now: subscribed upstream (chunked where the protocol needs it). */
  subscribe(symbols: readonly string[]): void;
  /** Symbols nobody needs any more: unsubscribed upstream. */
  unsubscribe(symbols: readonly string[]): void;
  /** Called for every tick that changed a symbol's quote; returns the function that removes the listener. */
  onQuote(listener: (update: StreamedQuote) => void): () => void;
  /** The latest merged quote of a subscribed symbol, if any tick arrived since its subscription. */
  latest(symbol: string): StreamedQuote | undefined;
  status(): QuoteStreamStatus;
  /** Opens the upstream connection (lazily: a stream with no subscriptions need not hold a socket). */
  start(): void;
  close(): Promise<void>;
}
