// One event of a topic, as produced once by its poller and written unchanged to every viewer (and, with
// Redis, published to the other replicas).
import { ApiError, errorBody } from '../errors.js';
import type { Topic, TopicKind } from './stream-topics.js';

export interface TopicEvent {
  topic: string;
  /** SSE `id:`: the producer's clock in ms, strictly increasing per producer. */
  id: string;
  event: TopicKind | 'error';
  /** One line of JSON: the body the matching GET route would answer. */
  data: string;
  /** Equal fingerprints mean nothing changed: no event is sent. */
  fingerprint: string;
}

let lastId = 0;

export function nextEventId(now = Date.now()): string {
  lastId = Math.max(lastId + 1, now);
  return String(lastId);
}

export function valueEvent(topic: Topic, data: string, fingerprint: string): TopicEvent {
  return { topic: topic.id, id: nextEventId(), event: topic.kind, data, fingerprint };
}

/** The one error body, plus the topic it is about (`quote=IBM`), so a page knows which panel failed. */
export function errorEvent(topic: Topic, error: ApiError): TopicEvent {
  const id = nextEventId();
  const body = { ...errorBody(error, id), topic: topic.arg === '' ? topic.kind : `${topic.kind}=${topic.arg}` };
  return { topic: topic.id, id, event: 'error', data: JSON.stringify(body), fingerprint: `error:${error.code}:${error.message}` };
}

/** The SSE frame; `data` is JSON without raw newlines, so one `data:` line carries it. */
export function frameOf(event: TopicEvent): string {
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${event.data}\n\n`;
}
