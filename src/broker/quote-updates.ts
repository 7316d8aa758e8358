// The latest merged quote of each symbol a broker feed streams, and the listeners told of each change: a
// first quote without any market value is no quote yet, a tick that changed no value is not news, and a
// failing listener never stops the others.
import type { Logger } from 'pino';
import type { BrokerQuote } from './broker.js';
import { hasQuoteValues, isComplete, sameQuoteValues } from './quote-completion.js';
import type { StreamedQuote } from './quote-stream.js';

export class QuoteUpdates {
  private readonly latestBySymbol = new Map<string, StreamedQuote>();
  private readonly listeners = new Set<(update: StreamedQuote) => void>();

  constructor(private readonly logger: Logger) {}

  on(listener: (update: StreamedQuote) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  latest(symbol: string): StreamedQuote | undefined {
    return this.latestBySymbol.get(symbol);
  }

  forget(symbol: string): void {
    this.latestBySymbol.delete(symbol);
  }

  /** Records `quote` for `symbol` and tells the listeners, unless it says nothing new. */
  publish(symbol: string, quote: BrokerQuote, tickAt: number): void {
    const previous = this.latestBySymbol.get(symbol);
    if (previous === undefined ? !hasQuoteValues(quote) : sameQuoteValues(previous.quote, quote)) return;
    const update: StreamedQuote = { symbol, quote, tickAt, complete: isComplete(quote) };
    this.latestBySymbol.set(symbol, update);
    for (const listener of this.listeners) {
      try {
        listener(update);
      } catch (error) {
        this.logger.error({ err: error, symbol }, 'broker stream listener failed');
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
