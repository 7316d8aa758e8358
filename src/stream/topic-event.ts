// One event of a topic, as produced once by its poller and written unchanged to every viewer (and, with
// Redis, published to the other replicas).
import { type ApiError, errorBody } from '../core/errors.js';
import type { Topic, TopicKind } from './stream-topics.js';

export interface TopicEvent {
  topic: string;
  /**
   * SSE `id:`: `<when the upstream answered, ms since epoch>-<sequence of the producer>`, so a page can
   * tell how old a pushed value is (as `Age` tells it for a GET).
   */
  id: string;
  event: TopicKind | 'error';
  /** One line of JSON: the body the matching GET route would answer. */
  data: string;
  /** Equal fingerprints mean nothing changed: no event is sent. */
  fingerprint: string;
}

let sequence = 0;

function eventId(producedAt: number): string {
  sequence += 1;
  return `${producedAt}-${sequence}`;
}

export function valueEvent(topic: Topic, data: string, fingerprint: string, storedAt: number): TopicEvent {
  return { topic: topic.id, id: eventId(storedAt), event: topic.kind, data, fingerprint };
}

/**
 * The one error body, plus the topic it is about (`quote=IBM`), so a page knows which panel failed, and, where the
 * topic waits before it is read again (a spent budget or share, a provider's limit), `retryAfter`: the seconds a GET
 * says in Retry-After. In public words for every viewer: one event serves every viewer of the topic on every
 * replica, whoever they are (the full words are in the log line and in status's local view).
 */
export function errorEvent(topic: Topic, error: ApiError): TopicEvent {
  const id = eventId(Date.now());
  const body = {
    ...errorBody(error, id),
    topic: topic.arg === '' ? topic.kind : `${topic.kind}=${topic.arg}`,
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfter: error.retryAfterSeconds }),
  };
  return { topic: topic.id, id, event: 'error', data: JSON.stringify(body), fingerprint: `error:${error.code}:${error.publicMessage}` };
}

/** The SSE frame; `data` is JSON without raw newlines, so one `data:` line carries it. */
export function frameOf(event: TopicEvent): string {
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${event.data}\n\n`;
}
