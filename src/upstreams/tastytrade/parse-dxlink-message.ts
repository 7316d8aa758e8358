// DXLink (dxFeed's websocket protocol, behind Tastytrade's quote stream) read by structure: JSON text
// messages with a `type` and a `channel`. Market events come in FEED_DATA, in the COMPACT format asked for:
// `["Quote", ["Quote","AAPL",172.1,172.12,300,200, "Quote","MSFT",…]]`, each event's values flattened in
// the order of its type's accepted fields, several types one after another, unknown values as the string
// "NaN" and large numbers in exponent form (1.3743299E7), as the recorded frames show. Events are whole
// per type (a Quote carries every Quote field), but a symbol's Quote, Trade and Summary arrive apart: they
// are merged per symbol into the snapshot's meaning (last, bid, ask, sizes, volume, change against the
// previous close).
import type { BrokerQuote } from '../../broker/broker.js';
import { changeFrom, toNumber, toText } from '../../broker/numbers.js';
import { instant } from '../../core/freshness.js';
import { socketMessageObject } from '../socket-message.js';
import { levelFeed } from './parse-quote-token.js';

export type DxlinkMessage =
  /** The server's answer to SETUP: its keepalive timeouts in seconds (null when absent). */
  | { kind: 'setup'; keepaliveTimeout: number | null; acceptKeepaliveTimeout: number | null }
  | { kind: 'auth-state'; authorized: boolean }
  | { kind: 'channel-opened'; channel: number }
  | { kind: 'channel-closed'; channel: number }
  /** The fields the server sends per event type, when it says (the recorded answer to FEED_SETUP does not). */
  | { kind: 'feed-config'; channel: number; eventFields: Record<string, string[]> | undefined }
  | { kind: 'feed-data'; channel: number; data: unknown }
  | { kind: 'keepalive' }
  | { kind: 'error'; error: string; message: string }
  | { kind: 'other' }
  | { kind: 'unreadable'; reason: string };

export function parseDxlinkMessage(text: string): DxlinkMessage {
  const read = socketMessageObject(text);
  if ('unreadable' in read) return { kind: 'unreadable', reason: read.unreadable };
  const message = read.object;
  const channel = toNumber(message.channel);
  if (typeof message.type !== 'string' || channel === null) return { kind: 'unreadable', reason: 'no type or channel' };
  switch (message.type) {
    case 'SETUP':
      return {
        kind: 'setup',
        keepaliveTimeout: toNumber(message.keepaliveTimeout),
        acceptKeepaliveTimeout: toNumber(message.acceptKeepaliveTimeout),
      };
    case 'AUTH_STATE':
      return { kind: 'auth-state', authorized: message.state === 'AUTHORIZED' };
    case 'CHANNEL_OPENED':
      return { kind: 'channel-opened', channel };
    case 'CHANNEL_CLOSED':
      return { kind: 'channel-closed', channel };
    case 'FEED_CONFIG':
      return { kind: 'feed-config', channel, eventFields: eventFieldsOf(message.eventFields) };
    case 'FEED_DATA':
      return { kind: 'feed-data', channel, data: message.data };
    case 'KEEPALIVE':
      return { kind: 'keepalive' };
    case 'ERROR':
      return { kind: 'error', error: toText(message.error) ?? 'UNKNOWN', message: toText(message.message) ?? '' };
    default:
      return { kind: 'other' };
  }
}

function eventFieldsOf(raw: unknown): Record<string, string[]> | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [type, fields] of Object.entries(raw)) if (Array.isArray(fields)) out[type] = fields.map(String);
  return out;
}

export interface FeedEvent {
  eventType: string;
  eventSymbol: string;
  values: Record<string, unknown>;
}

/**
 * The events of a FEED_DATA's data: COMPACT (type, flat values, repeated per type) read with the fields of
 * each type, or FULL (an array of objects). Values beyond the last whole event are ignored.
 */
export function feedEvents(data: unknown, fields: Readonly<Record<string, readonly string[]>>): FeedEvent[] {
  if (!Array.isArray(data)) return [];
  const events: FeedEvent[] = [];
  if (data.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))) {
    for (const item of data as Record<string, unknown>[]) pushEvent(events, item);
    return events;
  }
  for (let i = 0; i + 1 < data.length; i += 2) {
    const type = data[i];
    const values = data[i + 1];
    const names = typeof type === 'string' ? fields[type] : undefined;
    if (names === undefined || names.length === 0 || !Array.isArray(values)) continue;
    for (let at = 0; at + names.length <= values.length; at += names.length) {
      const event: Record<string, unknown> = { eventType: type };
      names.forEach((name, k) => {
        event[name] = values[at + k];
      });
      pushEvent(events, event);
    }
  }
  return events;
}

function pushEvent(events: FeedEvent[], event: Record<string, unknown>): void {
  const eventType = toText(event.eventType);
  const eventSymbol = toText(event.eventSymbol);
  if (eventType !== null && eventSymbol !== null) events.push({ eventType, eventSymbol, values: event });
}

/** A DXLink number: a JSON number, or a string ("NaN", "Infinity", "1.3743299E7"); NaN and infinities are unknown. @internal */
export function dxNumber(raw: unknown): number | null {
  if (typeof raw === 'string' && !/^[+-]?(\d|\.\d)/.test(raw.trim())) return null;
  return toNumber(raw);
}

/** One symbol's fields so far; undefined: no event has said it yet, null: the event said "NaN". */
export interface SymbolFields {
  last?: number | null;
  volume?: number | null;
  bid?: number | null;
  ask?: number | null;
  bidSize?: number | null;
  askSize?: number | null;
  previousClose?: number | null;
}

/** The fields asked for, by event type: what the quote needs and no more. */
export const EVENT_FIELDS = {
  Quote: ['eventType', 'eventSymbol', 'bidPrice', 'askPrice', 'bidSize', 'askSize', 'bidTime', 'askTime'],
  Trade: ['eventType', 'eventSymbol', 'price', 'dayVolume', 'size', 'time'],
  Summary: ['eventType', 'eventSymbol', 'prevDayClosePrice', 'dayOpenPrice'],
} as const satisfies Record<string, readonly string[]>;

export type EventType = keyof typeof EVENT_FIELDS;

/**
 * When the event happened (ms since epoch): a trade's time, the later of a quote's bid and ask times; null
 * when it says none (UPSTREAMS.md: bidTime and askTime are often 0), and the tick is then stamped on receipt.
 */
export function eventTime(event: FeedEvent): number | null {
  const v = event.values;
  const times =
    event.eventType === 'Quote' ? [dxNumber(v.bidTime), dxNumber(v.askTime)] : event.eventType === 'Trade' ? [dxNumber(v.time)] : [];
  const latest = Math.max(0, ...times.map((t) => t ?? 0));
  return latest > 0 ? latest : null;
}

/** Folds one event into a symbol's fields; true when a value changed. */
export function mergeEvent(known: SymbolFields, event: FeedEvent): boolean {
  const v = event.values;
  const next: SymbolFields = {};
  switch (event.eventType) {
    case 'Quote':
      next.bid = dxNumber(v.bidPrice);
      next.ask = dxNumber(v.askPrice);
      next.bidSize = dxNumber(v.bidSize);
      next.askSize = dxNumber(v.askSize);
      break;
    case 'Trade':
      next.last = dxNumber(v.price);
      // A trade without a day volume (crypto sends "NaN") leaves the one known, if any.
      if ('dayVolume' in v) next.volume = dxNumber(v.dayVolume) ?? known.volume ?? null;
      break;
    case 'Summary':
      next.previousClose = dxNumber(v.prevDayClosePrice);
      break;
    default:
      return false;
  }
  let changed = false;
  for (const [key, value] of Object.entries(next) as [keyof SymbolFields, number | null][]) {
    if (known[key] !== value) {
      known[key] = value;
      changed = true;
    }
  }
  return changed;
}

/**
 * The quote a symbol's fields make, as a snapshot means it; fields no event has given are null. Its
 * freshness is the level of the quote token the socket was opened with (parse-quote-token.ts), as of the
 * tick's time (the event's own, or its arrival).
 */
export function streamedQuote(symbol: string, fields: SymbolFields, tickAt: number, level: string | null): BrokerQuote {
  const last = fields.last ?? null;
  const { change, changePercent } = changeFrom(last, fields.previousClose ?? null);
  return {
    symbol,
    last,
    bid: fields.bid ?? null,
    ask: fields.ask ?? null,
    bidSize: fields.bidSize ?? null,
    askSize: fields.askSize ?? null,
    change,
    changePercent,
    volume: fields.volume ?? null,
    updatedAt: instant(tickAt),
    freshness: { kind: levelFeed(level) ?? 'unknown', asOf: instant(tickAt) },
  };
}
