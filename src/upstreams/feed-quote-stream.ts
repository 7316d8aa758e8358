// What both broker feeds are to their callers besides their protocol: the merged quotes they publish
// (QuoteUpdates) and the socket lifecycle (FeedSocket) they start, report and close. A feed adds its
// subscriptions and frames, and builds its FeedSocket with its protocol.
import type { Logger } from 'pino';
import type { BrokerQuoteStream, QuoteStreamStatus, StreamedQuote } from '../broker/quote-stream.js';
import { QuoteUpdates } from '../broker/quote-updates.js';
import type { FeedSocket } from './feed-socket.js';

export abstract class FeedQuoteStream implements Omit<BrokerQuoteStream, 'broker' | 'subscribe' | 'unsubscribe'> {
  protected readonly updates: QuoteUpdates;
  /** Built by the feed, with its protocol. */
  protected abstract readonly link: FeedSocket;

  constructor(logger: Logger) {
    this.updates = new QuoteUpdates(logger);
  }

  /** Symbols subscribed upstream now (counted in status while the socket is authorised). */
  protected abstract subscriptions(): number;

  start(): void {
    this.link.start();
  }

  onQuote(listener: (update: StreamedQuote) => void): () => void {
    return this.updates.on(listener);
  }

  latest(symbol: string): StreamedQuote | undefined {
    return this.updates.latest(symbol);
  }

  status(): QuoteStreamStatus {
    return this.link.status(this.subscriptions());
  }

  async close(): Promise<void> {
    const closing = this.link.close();
    this.updates.clear();
    await closing;
  }
}
