// The Client Portal websocket's messages from the gateway, read by structure: market data frames
// (`smd+<conid>`, only the fields that changed, values as the snapshot writes them), the heartbeat, the
// session's status, the greeting and the request for a session. Recorded frames show the two sides of
// IBKR's typing: prices as strings, the percent change (83) as a JSON number, `_updated` and `conid`
// numbers, and some frames without a conid at all (skipped: there is nothing to merge them into).
import type { BrokerQuote } from '../../broker/broker.js';
import { toNumber, toText } from '../../broker/numbers.js';
import { readFields, snapshotToQuote } from './parse-snapshot.js';
import { socketMessageObject } from '../socket-message.js';

export type StreamMessage =
  /** Fields of one conid that changed, keyed by field code. */
  | { kind: 'market-data'; conid: number; updatedAt: number | null; fields: Record<string, unknown> }
  | { kind: 'market-data-without-conid' }
  /** `{"topic":"system","hb":<ms>}`, about every 10 s. */
  | { kind: 'heartbeat'; at: number }
  /** `{"topic":"system","success":"<user>"}`: the socket is open for this user. */
  | { kind: 'greeting' }
  /** `sts`: the brokerage session's state; the gateway sends its keys in one frame or one frame each. */
  | { kind: 'status'; authenticated: boolean | undefined }
  /** No session cookie came with the upgrade: the gateway waits for `{"session":"…"}`. */
  | { kind: 'waiting-for-session' }
  | { kind: 'error'; message: string }
  /** Anything else (`act`, `tic` replies, bulletins, notifications): nothing for quotes. */
  | { kind: 'other' }
  | { kind: 'unreadable'; reason: string };

/** Keys of a market data frame that are about the frame, not the instrument. */
const ENVELOPE = new Set(['topic', 'conid', 'conidEx', '_updated', 'server_id', '6119']);

export function parseStreamMessage(text: string): StreamMessage {
  const read = socketMessageObject(text);
  if ('unreadable' in read) return { kind: 'unreadable', reason: read.unreadable };
  const message = read.object;
  const topic = typeof message.topic === 'string' ? message.topic : undefined;
  if (topic === undefined) {
    if (toText(message.message)?.toLowerCase() === 'waiting for session') return { kind: 'waiting-for-session' };
    if (message.error !== undefined) return { kind: 'error', message: toText(message.error) ?? 'error' };
    return { kind: 'other' };
  }
  if (topic.startsWith('smd+')) return marketData(message);
  if (topic === 'system') {
    const at = toNumber(message.hb);
    if (at !== null) return { kind: 'heartbeat', at };
    return message.success !== undefined ? { kind: 'greeting' } : { kind: 'other' };
  }
  if (topic === 'sts') {
    const args = message.args as Record<string, unknown> | undefined;
    const authenticated = args?.authenticated;
    return { kind: 'status', authenticated: typeof authenticated === 'boolean' ? authenticated : undefined };
  }
  if (topic === 'error' || message.error !== undefined) return { kind: 'error', message: toText(message.error) ?? topic };
  return { kind: 'other' };
}

function marketData(message: Record<string, unknown>): StreamMessage {
  const conid = toNumber(message.conid);
  if (conid === null) return { kind: 'market-data-without-conid' };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) if (!ENVELOPE.has(key)) fields[key] = value;
  return { kind: 'market-data', conid, updatedAt: toNumber(message._updated), fields };
}

/** One conid's fields so far: each frame's fields over the ones before it. */
export function mergeFields(known: Record<string, unknown> | undefined, frame: Record<string, unknown>): Record<string, unknown> {
  return known === undefined ? { ...frame } : Object.assign(known, frame);
}

/**
 * The quote the merged fields make, read exactly as a snapshot row with the same fields: its freshness too,
 * from the availability (6509) the subscription's first frame carried and the last price's prefix.
 * `tickAt`: the frame's `_updated`, or when it arrived.
 */
export function streamedQuote(symbol: string, conid: number, fields: Record<string, unknown>, tickAt: number): BrokerQuote {
  return snapshotToQuote(symbol, readFields(conid, fields, tickAt), tickAt);
}
