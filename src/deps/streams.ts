// Server-Sent Events' sources: what each stream topic is read from (filled by the route plugins), the relay
// that carries topics and the broker stream across replicas (with Redis only), and the one broker quote
// feed of the deployment.
import type { Logger } from 'pino';
import type { Broker } from '../broker/broker.js';
import type { Config } from '../core/config.js';
import type { Configured } from '../core/configured.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import type { StateStore } from '../store/state-store.js';
import type { StateScopes } from '../store/upstream-identity.js';
import { LiveTopics } from '../stream/live-topics.js';
import { SharedQuoteStream } from '../stream/shared-quote-stream.js';
import type { Topic } from '../stream/stream-topics.js';
import { TopicRelay } from '../stream/topic-relay.js';
import { type BrokerOptions, quoteFeed } from './broker.js';

export interface Streams {
  liveTopics: LiveTopics;
  relay: TopicRelay | undefined;
  brokerQuotes: SharedQuoteStream | undefined;
  /** The stream before the relay it publishes on (the relay before the store whose Redis it uses). */
  close(): Promise<void>;
}

export function createStreams(
  config: Config,
  logger: Logger,
  { store, scopes }: { store: StateStore; scopes: StateScopes },
  broker: Configured<Broker>,
  options: BrokerOptions,
): Streams {
  const liveTopics = new LiveTopics();
  const upstreamOfTopic = {
    quote: ALPHA_VANTAGE,
    brokerQuotes: config.broker.kind,
    overview: config.overview.source,
    status: 'none',
  } as const;
  const relay =
    store.shared === undefined
      ? undefined
      : new TopicRelay({
          shared: store.shared,
          topics: liveTopics,
          logger,
          scopeOf: (topic: Topic) => scopes.of(upstreamOfTopic[topic.kind]),
        });
  const feed = quoteFeed(config, logger, broker, options);
  const brokerQuotes =
    feed === undefined
      ? undefined
      : new SharedQuoteStream({
          broker: config.broker.kind,
          create: feed,
          relay,
          scope: scopes.of(config.broker.kind),
          logger,
          ...options.streaming,
        });
  return {
    liveTopics,
    relay,
    brokerQuotes,
    close: async () => {
      await brokerQuotes?.close();
      await relay?.close();
    },
  };
}
