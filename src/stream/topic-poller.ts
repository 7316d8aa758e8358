// One poller per topic, whatever the number of viewers: it reads the topic through its route's cache path
// at the cadence the cache window allows (when the fresh window ends; after a failed refresh, when the
// cache would let a request try again) and reports every result. It stops when told: no viewers left.
// A symbol the provider says it has no data for rests until the cache forgets that answer
// (CACHE_NOT_FOUND_SECONDS): its one error event stands meanwhile, and then it is looked at once more.
//
// The time of the next read is fixed when a read ends, from when that read started and what the cache
// said, before its result is fanned out: however long the fan-out takes, it never moves the next read.
import type { Logger } from 'pino';
import type { CacheResult } from '../cache/cache-store.js';
import { type Caller, runWork, type Work } from '../core/caller.js';
import { ApiError, NotFoundAnswerError } from '../core/errors.js';
import type { LiveTopics } from './live-topics.js';
import type { Topic } from './stream-topics.js';
import { errorEvent, type TopicEvent, valueEvent } from './topic-event.js';

/**
 * A poll asks for at most this many of a topic's holders (a budget tries each until one may have the call): the
 * most a popular topic's thousands of holders need, at a bounded cost per poll.
 */
const MAX_HOLDERS = 32;

/** At most MAX_HOLDERS of `callers`, picked at random when there are more (so that no one is always left out). */
export function sample(callers: readonly Caller[]): readonly Caller[] {
  if (callers.length <= MAX_HOLDERS) return callers;
  const picked = [...callers];
  for (let i = 0; i < MAX_HOLDERS; i += 1) {
    const j = i + Math.floor(Math.random() * (picked.length - i));
    [picked[i], picked[j]] = [picked[j] as Caller, picked[i] as Caller];
  }
  return picked.slice(0, MAX_HOLDERS);
}

/** No topic is polled more often than this (broker quotes: their 1 s fresh window). @internal */
export const MIN_POLL_MS = 1_000;
/** After a failure, the next try; the cache pauses refreshes of a failed key for as long. */
const RETRY_MS = 5_000;
/** A fresh entry has just expired when the poller looks: refreshed, not answered from the old one. */
const AFTER_EXPIRY_MS = 5;

/**
 * When a topic is next read, after a read that started at `startedAt` and was answered at `endedAt`;
 * never sooner than MIN_POLL_MS after the start.
 */
function nextPollAt(result: CacheResult<unknown>, startedAt: number, endedAt: number): number {
  const { entry, status } = result;
  const earliest = startedAt + MIN_POLL_MS;
  // The fresh window counts from the upstream answer (as Age does): a read before it ends gets the same entry.
  if (status !== 'STALE') return Math.max(earliest, entry.freshUntil + AFTER_EXPIRY_MS);
  // A refresh that failed pauses its key for this long from the failure (UpstreamCache.refresh).
  return Math.max(earliest, endedAt + Math.min(entry.freshUntil - entry.storedAt, RETRY_MS));
}

/**
 * After a failed read: RETRY_MS from its start, so a read that failed slowly (a timeout) is retried as
 * soon as it ends; an upstream's Retry-After counts from its answer; a remembered "not found" once the
 * cache has forgotten it.
 */
function retryAt(error: ApiError, startedAt: number, endedAt: number): number {
  if (error instanceof NotFoundAnswerError && error.remembered !== undefined) {
    return Math.max(startedAt + MIN_POLL_MS, error.remembered.until + AFTER_EXPIRY_MS);
  }
  return Math.max(startedAt + Math.max(MIN_POLL_MS, RETRY_MS), endedAt + (error.retryAfterSeconds ?? 0) * 1000);
}

/**
 * Reads a topic once, on behalf of the callers holding it (its upstream calls are put to their accounts), and
 * turns the outcome into its event, with the time of the next read: not before their share returns, when a budget
 * held them to it (the stale value stays meanwhile).
 */
export async function readTopic(
  topics: LiveTopics,
  topic: Topic,
  revalidate: boolean,
  logger: Logger,
  holders: readonly Caller[],
): Promise<{ event: TopicEvent; nextAt: number }> {
  const startedAt = Date.now();
  const work: Work = { callers: sample(holders) };
  try {
    const result = await runWork(work, () => topics.load(topic, revalidate));
    const endedAt = Date.now();
    const data = JSON.stringify(result.entry.value);
    return {
      event: valueEvent(topic, data, topics.fingerprint(topic.kind, result.entry.value, data), result.entry.storedAt),
      nextAt: Math.max(nextPollAt(result, startedAt, endedAt), work.heldUntil ?? 0),
    };
  } catch (error) {
    const apiError = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'internal error');
    if (!(error instanceof ApiError)) logger.error({ err: error, topic: topic.id }, 'stream topic failed');
    return { event: errorEvent(topic, apiError), nextAt: retryAt(apiError, startedAt, Date.now()) };
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
    private readonly holders: () => readonly Caller[],
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
    const { event, nextAt } = await readTopic(this.topics, this.topic, true, this.logger, this.holders());
    if (this.stopped) return;
    this.emit(event);
    // A read that ran past its successor's time is followed at once; reads never overlap.
    this.timer = setTimeout(() => void this.tick(), Math.max(0, nextAt - Date.now()));
  }
}
