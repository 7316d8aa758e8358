// GET /iserver/marketdata/snapshot: one row per conid, fields keyed by numeric code, every value a
// string ("1,300", "50.2M", "C168.42"). The first call for a conid starts a subscription and returns the
// row without any field: `hasData` tells the caller to ask again. How fresh the row is comes from the row
// itself: market data availability (6509) and the last price's prefix (see ibkrFreshness).
import { UnreadableAnswerError } from '../../core/errors.js';
import { type Feed, type Freshness, instant } from '../../core/freshness.js';
import type { BrokerQuote } from '../../broker/broker.js';
import { changeFrom, toNumber, toText } from '../../broker/numbers.js';

/** @internal */
export const FIELD = {
  last: '31',
  symbol: '55',
  change: '82',
  changePercent: '83',
  bid: '84',
  askSize: '85',
  ask: '86',
  volume: '87',
  bidSize: '88',
  open: '7295',
  close: '7296',
  priorClose: '7741',
  availability: '6509',
} as const;

/** The fields every snapshot request asks for, and every websocket subscription. */
export const QUOTE_FIELDS: readonly string[] = [
  FIELD.last,
  FIELD.symbol,
  FIELD.change,
  FIELD.changePercent,
  FIELD.bid,
  FIELD.askSize,
  FIELD.ask,
  FIELD.volume,
  FIELD.bidSize,
  FIELD.open,
  FIELD.priorClose,
  FIELD.availability,
];
export const SNAPSHOT_FIELDS = QUOTE_FIELDS.join(',');

const PRICE_FIELDS = [FIELD.last, FIELD.bid, FIELD.ask, FIELD.change, FIELD.priorClose, FIELD.close];

/** @internal */
export type PriceFlag = 'closing' | 'halted' | null;

export interface SnapshotRow {
  conid: number;
  /** False for the empty first answer of a new subscription. */
  hasData: boolean;
  last: number | null;
  /** "C" prefix: the last price is the previous close; "H": trading is halted. */
  lastFlag: PriceFlag;
  bid: number | null;
  ask: number | null;
  bidSize: number | null;
  askSize: number | null;
  change: number | null;
  changePercent: number | null;
  volume: number | null;
  priorClose: number | null;
  /** Market data availability (6509) as sent, e.g. "RpB", "DPB", "ZB"; null when the row has none. */
  availability: string | null;
  /** ms since epoch. */
  updatedAt: number | null;
}

/** A price that may carry IBKR's one-letter prefix. @internal */
export function parsePrice(raw: unknown): { value: number | null; flag: PriceFlag } {
  if (typeof raw === 'string') {
    const match = /^\s*([CH])\s*(.+)$/i.exec(raw);
    if (match !== null) {
      const flag = (match[1] as string).toUpperCase() === 'C' ? 'closing' : 'halted';
      return { value: toNumber(match[2]), flag };
    }
  }
  return { value: toNumber(raw), flag: null };
}

export function parseSnapshot(json: unknown): SnapshotRow[] {
  if (!Array.isArray(json)) throw new UnreadableAnswerError('snapshot', 'the IBKR gateway sent a snapshot that is not a list');
  const rows: SnapshotRow[] = [];
  for (const item of json) {
    if (item === null || typeof item !== 'object') continue;
    const row = item as Record<string, unknown>;
    const conid = toNumber(row.conid);
    if (conid !== null) rows.push(readFields(conid, row, toNumber(row._updated)));
  }
  return rows;
}

/**
 * One conid's fields, keyed by code, as a snapshot row carries them or as the websocket's frames build them
 * up: the one reading of IBKR's values, so that a streamed quote and a snapshot quote mean the same.
 */
export function readFields(conid: number, fields: Record<string, unknown>, updatedAt: number | null): SnapshotRow {
  const last = parsePrice(fields[FIELD.last]);
  const close = parsePrice(fields[FIELD.close]).value;
  return {
    conid,
    hasData: PRICE_FIELDS.some((code) => toText(fields[code]) !== null),
    last: last.value,
    lastFlag: last.flag,
    bid: parsePrice(fields[FIELD.bid]).value,
    ask: parsePrice(fields[FIELD.ask]).value,
    bidSize: toNumber(fields[FIELD.bidSize]),
    askSize: toNumber(fields[FIELD.askSize]),
    change: toNumber(fields[FIELD.change]),
    changePercent: toNumber(fields[FIELD.changePercent]),
    volume: toNumber(fields[FIELD.volume]),
    priorClose: parsePrice(fields[FIELD.priorClose]).value ?? close,
    availability: toText(fields[FIELD.availability]),
    updatedAt,
  };
}

/** 6509's first letter: the feed it names, and whether the values are frozen (the last ones before the close). */
const AVAILABILITY: Record<string, { feed: Feed; frozen: boolean }> = {
  R: { feed: 'realtime', frozen: false },
  D: { feed: 'delayed', frozen: false },
  Z: { feed: 'realtime', frozen: true },
  Y: { feed: 'delayed', frozen: true },
};

/**
 * What a row says of its own freshness. The last price's prefix says what that price is: "H" a halted
 * market's, "C" the previous close in place of a trade (recorded on a delayed paper account: "DPB" with
 * "C267.61"). Without one, 6509's first letter: R real-time, D delayed, Z frozen, Y frozen from the delayed
 * feed (recorded on a Saturday: "ZB"); N (not subscribed), another letter or none is unknown. The feed
 * rides along where the kind does not say it. IBKR states no number of minutes for D (its documentation:
 * 15 to 20, by exchange), so none is given. `asOf` is the gateway's `_updated`, else `receivedAt`.
 */
function ibkrFreshness(availability: string | null, flag: PriceFlag, asOfMs: number): Freshness {
  const read = availability === null ? undefined : AVAILABILITY[availability.charAt(0)];
  const asOf = instant(asOfMs);
  const feed = read === undefined ? {} : { feed: read.feed };
  if (flag === 'halted') return { kind: 'halted', asOf, ...feed };
  if (flag === 'closing') return { kind: 'prior-close', asOf, ...feed };
  if (read === undefined) return { kind: 'unknown', asOf };
  // Frozen: IBKR's "last data recorded at market close", which it sends while the market is closed.
  if (read.frozen) return { kind: 'frozen', asOf, market: 'closed', ...feed };
  return { kind: read.feed, asOf };
}

/** `receivedAt`: when the answer came, for a row without `_updated` (ms since epoch). */
export function snapshotToQuote(symbol: string, row: SnapshotRow, receivedAt: number): BrokerQuote {
  const computed = changeFrom(row.last, row.priorClose);
  return {
    symbol,
    last: row.last,
    bid: row.bid,
    ask: row.ask,
    bidSize: row.bidSize,
    askSize: row.askSize,
    change: row.change ?? computed.change,
    changePercent: row.changePercent ?? computed.changePercent,
    volume: row.volume,
    updatedAt: row.updatedAt === null ? null : new Date(row.updatedAt).toISOString(),
    freshness: ibkrFreshness(row.availability, row.lastFlag, row.updatedAt ?? receivedAt),
  };
}
