// The `brokerQuotes` topic while the broker's quotes stream: each change is pushed as it arrives, as the
// body GET /api/broker/quotes answers (its event id starting with the newest tick's time). Ticks that
// arrive in one event-loop turn make one event, and the hub gives a slow viewer only the newest. While the
// stream cannot answer every symbol of the topic (before its first ticks, while it reconnects, during a
// lost session), the topic's usual feed polls snapshots instead; it stops once the stream answers again.
import type { Caller } from '../core/caller.js';
import type { FeedFactory, TopicFeed } from './stream-hub.js';
import type { SharedQuoteStream } from './shared-quote-stream.js';
import type { Topic } from './stream-topics.js';
import { type TopicEvent, valueEvent } from './topic-event.js';

/** How often a topic without the stream checks whether the stream can answer it now. */
const CHECK_MS = 1_000;

/** The hub's feed factory with brokerQuotes topics served from `shared` (other topics as `base` serves them). */
export function withStreamedBrokerQuotes(shared: SharedQuoteStream, base: FeedFactory): FeedFactory {
  return (topic, deliver, holders) =>
    topic.kind === 'brokerQuotes' ? new StreamedQuotesFeed(topic, deliver, holders, shared, base) : base(topic, deliver, holders);
}

class StreamedQuotesFeed implements TopicFeed {
  private readonly symbols: string[];
  private readonly unlisten: () => void;
  private readonly timer: NodeJS.Timeout;
  private fallback: TopicFeed | undefined;
  private scheduled: NodeJS.Immediate | undefined;
  private stopped = false;

  constructor(
    private readonly topic: Topic,
    private readonly deliver: (event: TopicEvent) => void,
    private readonly holders: () => readonly Caller[],
    private readonly shared: SharedQuoteStream,
    private readonly base: FeedFactory,
  ) {
    this.symbols = topic.arg.split(',');
    const mine = new Set(this.symbols);
    shared.hold(this, this.symbols);
    this.unlisten = shared.onQuote((update) => {
      if (mine.has(update.symbol)) this.schedule();
    });
    this.timer = setInterval(() => this.push(), CHECK_MS);
    this.timer.unref();
    this.push();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearImmediate(this.scheduled);
    this.unlisten();
    this.shared.release(this);
    this.fallback?.stop();
    this.fallback = undefined;
  }

  private schedule(): void {
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.push();
    });
  }

  /** The stream's answer as the topic's event, or the snapshot feed while the stream cannot answer. */
  private push(): void {
    if (this.stopped) return;
    const answer = this.shared.answer(this.symbols);
    if (answer === undefined) {
      this.fallback ??= this.base(this.topic, this.deliver, this.holders);
      return;
    }
    this.fallback?.stop();
    this.fallback = undefined;
    const data = JSON.stringify(answer.body);
    this.deliver(valueEvent(this.topic, data, data, answer.newestTickAt));
  }
}
