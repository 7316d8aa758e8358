// Where a stream topic gets its value: each area registers the function its own GET route serves from
// (the same cache key, window, budget and single flight), so a stream never costs an upstream more than
// the REST route would. Filled by the route plugins, read by the stream pollers.
import type { CacheResult } from '../cache/cache-store.js';
import { ApiError } from '../core/errors.js';
import type { Topic, TopicKind } from './stream-topics.js';

/** `revalidate`: wait for a stale entry's refresh (a poller) rather than answer stale at once (a first look). */
export type TopicLoader = (arg: string, options: { revalidate: boolean }) => Promise<CacheResult<unknown>>;

interface Provider {
  load: TopicLoader;
  /** What counts as a change; by default the whole body. */
  fingerprint?: (value: unknown) => string;
}

export class LiveTopics {
  private readonly providers = new Map<TopicKind, Provider>();

  provide(kind: TopicKind, load: TopicLoader, fingerprint?: (value: unknown) => string): void {
    this.providers.set(kind, { load, fingerprint });
  }

  load(topic: Topic, revalidate: boolean): Promise<CacheResult<unknown>> {
    const provider = this.providers.get(topic.kind);
    if (provider === undefined)
      return Promise.reject(new ApiError('PROVIDER_NOT_CONFIGURED', `${topic.kind} is not served by this service`));
    return provider.load(topic.arg, { revalidate });
  }

  fingerprint(kind: TopicKind, value: unknown, text: string): string {
    return this.providers.get(kind)?.fingerprint?.(value) ?? text;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    liveTopics: LiveTopics;
  }
}
