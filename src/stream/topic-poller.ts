// One poller per topic, whatever the number of viewers: it reads the topic through its route's cache path
// at the cadence the cache window allows (when the fresh window ends; after a failed refresh, when the
// cache would let a request try again) and reports every result. It stops when told: no viewers left.
import type { Logger } from 'pino';
import type { CacheResult } from '../cache/cache-store.js';
import { ApiError } from '../errors.js';
import type { LiveTopics } from './live-topics.js';
import type { Topic } from './stream-topics.js';
import { errorEvent, type TopicEvent, valueEvent } from './topic-event.js';

/** No topic is polled more often than this (broker quotes: their 1 s fresh window). */
export const MIN_POLL_MS = 1_000;
/** After a failure, the next try; the cache pauses refreshes of a failed key for as long. */
const RETRY_MS = 5_000;
/** A fresh entry has just expired when the poller looks: refreshed, not answered from the old one. */
const AFTER_EXPIRY_MS = 5;

export function nextPollDelay(result: CacheResult<unknown>, now: number): number {
  const { entry, status } = result;
  if (status !== 'STALE') return Math.max(MIN_POLL_MS, entry.freshUntil - now + AFTER_EXPIRY_MS);
  return Math.max(MIN_POLL_MS, Math.min(entry.freshUntil - entry.storedAt, RETRY_MS));
}

export function retryDelay(error: ApiError): number {
  return Math.max(MIN_POLL_MS, (error.retryAfterSeconds ?? 0) * 1000, RETRY_MS);
}

/** Reads a topic once and turns the outcome into its event, with the delay until the next read. */
export async function readTopic(topics: LiveTopics, topic: Topic, revalidate: boolean, logger: Logger): Promise<{ event: TopicEvent; delayMs: number }> {
  try {
    const result = await topics.load(topic, revalidate);
    const data = JSON.stringify(result.entry.value);
    return { event: valueEvent(topic, data, topics.fingerprint(topic.kind, result.entry.value, data), result.entry.storedAt), delayMs: nextPollDelay(result, Date.now()) };
  } catch (error) {
    const apiError = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'internal error');
    if (!(error instanceof ApiError)) logger.error({ err: error, topic: topic.id }, 'stream topic failed');
    return { event: errorEvent(topic, apiError), delayMs: retryDelay(apiError) };
  }
}

export class TopicPoller {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly topic: Topic,
    private readonly topics: LiveTopics,
    private readonly emit: (event: TopicEvent) => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { event, delayMs } = await readTopic(this.topics, this.topic, true, this.logger);
    if (this.stopped) return;
    this.emit(event);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }
}
