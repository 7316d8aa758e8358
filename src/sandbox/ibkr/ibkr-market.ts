// The simulated gateway's one view of the market, read by its snapshots and its websocket alike, so that a
// streamed quote and a snapshot taken at the same moment agree. Each contract ticks on its own grid (every
// 150 ms for the busiest, every few seconds for the quietest; eight times slower before and after the
// regular session; indices only in it) and holds its last tick's values outside the sessions. Volume
// accumulates over the day's session. What the account is entitled to shows as a live gateway's answers
// were recorded (2026, test/fixtures/recorded/ibkr/snapshot-*-2026): with a market data subscription,
// "RpB" while the market trades and frozen values, "ZB" with no prefix, once it is closed (a Saturday);
// without one (a paper account's default), delayed values, "DPB", and once the market is closed the last
// price with the "C" (previous close) prefix.
import { inExtendedSession, inRegularSession, MINUTE_MS, usTradingDay } from '../../core/us-market-time.js';
import { hash, previousClose, priceAt, round, unit } from '../price-model.js';
import type { SimContract } from './ibkr-contracts.js';

export type MarketSession = 'regular' | 'extended' | 'closed';

/** The account's market data: a real-time subscription, or none (delayed data, as a paper account gets by default). */
export const MARKET_DATA = ['realtime', 'delayed'] as const;
export type MarketData = (typeof MARKET_DATA)[number];

/** IBKR's delayed data is 15 to 20 minutes behind, by exchange; US stocks 15. */
const DELAY_MS = 15 * MINUTE_MS;

const QUARTER_MS = 15 * 60_000;

/** US equity hours: the regular session 09:30-16:00 New York, extended from 04:00 to 20:00, weekdays. */
export function usSession(now: number): MarketSession {
  if (inRegularSession(now)) return 'regular';
  return inExtendedSession(now) ? 'extended' : 'closed';
}

export interface MarketQuote {
  last: number;
  bid: number;
  ask: number;
  bidSize: number;
  askSize: number;
  volume: number;
  priorClose: number;
  open: number;
  high: number;
  low: number;
  /** Which tick this is: a new index is a new tick. */
  tick: number;
  /** No session is open: the values are the last session's. */
  closed: boolean;
}

export class IbkrMarket {
  /** Symbols whose trading is halted: no ticks, and an "H" on the last price. */
  readonly halted = new Set<string>();
  /** The last trading moment before a closed quarter hour, per kind of contract. */
  private readonly closedUntil = new Map<string, number>();

  constructor(
    /** The session at a moment; tests and benchmarks hold the market open or closed (switched at /__sandbox/ibkr too). */
    public sessionAt: (now: number) => MarketSession = usSession,
    /** The account's market data (switched at /__sandbox/ibkr). */
    public marketData: MarketData = 'realtime',
  ) {}

  /** The market moment the account sees at `now`: delayed data is a quarter of an hour behind. */
  seenAt(now: number): number {
    return this.marketData === 'delayed' ? now - DELAY_MS : now;
  }

  /** How often a contract ticks in the regular session, ms: quiet names every few seconds, busy ones several times a second. */
  tickIntervalMs(contract: SimContract): number {
    return Math.round(150 + unit(`tick:${contract.priceSymbol}`) ** 2 * 3_850);
  }

  /** Whether a contract trades at `now`: stocks in every session, indices in the regular one, nothing halted. */
  trades(contract: SimContract, now: number): boolean {
    if (this.halted.has(contract.priceSymbol)) return false;
    const session = this.sessionAt(now);
    return contract.secType === 'IND' ? session === 'regular' : session !== 'closed';
  }

  /** The contract's quote after its last tick at or before `now`. */
  quote(contract: SimContract, now: number): MarketQuote {
    const halted = this.halted.has(contract.priceSymbol);
    const closed = !halted && !this.trades(contract, now);
    const tradingAt = closed ? this.lastTradingMoment(contract, now) : now;
    const interval = this.tickIntervalMs(contract) * (this.sessionAt(tradingAt) === 'regular' ? 1 : 8);
    const tick = Math.floor(tradingAt / interval);
    const at = tick * interval;
    const symbol = contract.priceSymbol;
    const base = priceAt(symbol, at);
    // A tick's own wobble, a few cents on a stock, so consecutive ticks differ the way trades do.
    const last = round(Math.max(0.01, base + (tickUnit(`noise:${symbol}`, tick) - 0.5) * base * 0.0008), 2);
    const spread = Math.max(0.01, round(last * 0.0002, 2));
    const bid = round(last - Math.ceil((spread / 2) * 100) / 100, 2);
    const open = round(priceAt(symbol, usTradingDay(dayStart(at)).open), 2);
    const lots = (seed: string) => 100 * (1 + Math.floor(tickUnit(`${seed}:${symbol}`, tick) * 30));
    return {
      last,
      bid,
      ask: round(bid + spread, 2),
      bidSize: lots('bs'),
      askSize: lots('as'),
      volume: this.volume(symbol, at),
      priorClose: round(previousClose(symbol, at), 2),
      open,
      high: round(Math.max(open, last) * (1 + unit(`hi:${symbol}:${dayStart(at)}`) * 0.004), 2),
      low: round(Math.min(open, last) * (1 - unit(`lo:${symbol}:${dayStart(at)}`) * 0.004), 2),
      tick,
      closed,
    };
  }

  /** The last moment a closed contract traded (sessions open and close on quarter hours), or `now` if not within four days. */
  private lastTradingMoment(contract: SimContract, now: number): number {
    const quarter = Math.floor(now / QUARTER_MS) * QUARTER_MS;
    const key = `${contract.secType}:${quarter}`;
    let found = this.closedUntil.get(key);
    if (found === undefined) {
      found = now;
      for (let start = quarter - QUARTER_MS; start > now - 4 * 86_400_000; start -= QUARTER_MS) {
        if (this.trades(contract, start)) {
          found = start + QUARTER_MS - 1;
          break;
        }
      }
      if (this.closedUntil.size > 1_000) this.closedUntil.clear();
      this.closedUntil.set(key, found);
    }
    return Math.min(found, now);
  }

  /** Shares traded so far in the day's session (04:00-20:00 New York), in round lots. */
  private volume(symbol: string, at: number): number {
    const day = usTradingDay(dayStart(at));
    const progress = Math.min(1, Math.max(0, (at - day.preOpen) / (day.postClose - day.preOpen)));
    const dayVolume = 200_000 + unit(`volume:${symbol}`) * 60_000_000;
    return Math.round((dayVolume * progress) / 100) * 100;
  }
}

/**
 * A number in [0, 1) for a tick of a series: the tick's bits mixed (murmur3's finaliser), so that
 * consecutive ticks differ as much as distant ones (hashing "name:<tick>" strings would not).
 */
export function tickUnit(seed: string, tick: number): number {
  let x = (hash(seed) ^ Math.imul(tick | 0, 0x9e3779b9) ^ Math.floor(tick / 4_294_967_296)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) >>> 0) / 4_294_967_296;
}

function dayStart(at: number): number {
  return Math.floor(at / 86_400_000) * 86_400_000;
}

const SUFFIX: Record<string, number> = { K: 1_000, M: 1_000_000 };

function toNumber(display: string): number {
  const suffix = display.at(-1) as string;
  return SUFFIX[suffix] === undefined ? Number(display) : Math.round(Number(display.slice(0, -1)) * (SUFFIX[suffix] as number));
}

/** A volume as the gateway writes it: "12.2M", "812.5K", or whole shares below a thousand. */
function gatewayVolume(volume: number): string {
  if (volume >= 1_000_000) return `${(volume / 1_000_000).toFixed(1)}M`;
  if (volume >= 1_000) return `${(volume / 1_000).toFixed(1)}K`;
  return String(volume);
}

/** A size with the gateway's thousands separators ("1,300"). */
function gatewaySize(n: number): string {
  return n.toLocaleString('en-US');
}

/** The last price with IBKR's prefix: "H" while halted; "C" when the market is closed and the data delayed (a real-time subscription shows the frozen price bare). */
function gatewayLast(quote: MarketQuote, halted: boolean, marketData: MarketData): string {
  return `${halted ? 'H' : quote.closed && marketData === 'delayed' ? 'C' : ''}${quote.last.toFixed(2)}`;
}

/** Market data availability (6509), as recorded: "RpB" live, "ZB" frozen; "DPB" delayed, open or closed. */
function availability(quote: MarketQuote, marketData: MarketData): string {
  if (marketData === 'delayed') return 'DPB';
  return quote.closed ? 'ZB' : 'RpB';
}

/**
 * A contract's fields keyed by IBKR's codes, written the way the gateway writes a snapshot: strings, commas,
 * "M"/"K" suffixes, a "C" or "H" prefix on the last price, and "87_raw", the volume's display value as a
 * number. The websocket sends the same values, the change percent as a JSON number (as recorded).
 */
export function gatewayFields(market: IbkrMarket, contract: SimContract, now: number): Record<string, string> {
  const q = market.quote(contract, market.seenAt(now));
  const change = q.last - q.priorClose;
  const fields: Record<string, string> = {
    '31': gatewayLast(q, market.halted.has(contract.priceSymbol), market.marketData),
    '55': contract.symbol,
    '70': q.high.toFixed(2),
    '71': q.low.toFixed(2),
    '82': change.toFixed(2),
    '83': ((change / q.priorClose) * 100).toFixed(2),
    '84': q.bid.toFixed(2),
    '85': gatewaySize(q.askSize),
    '86': q.ask.toFixed(2),
    '87': gatewayVolume(q.volume),
    // The number the display value stands for, as recorded beside it ("12.2M" and 1.22E7).
    '87_raw': String(toNumber(gatewayVolume(q.volume))),
    '88': gatewaySize(q.bidSize),
    '7059': String(100 * (1 + Math.floor(tickUnit(`ls:${contract.priceSymbol}`, q.tick) * 5))),
    '7295': q.open.toFixed(2),
    '7296': q.priorClose.toFixed(2),
    '7741': q.priorClose.toFixed(2),
    '6509': availability(q, market.marketData),
  };
  // Delayed data of a closed market has no quote to show, only the previous close (recorded 2026: asked for
  // 31, 84 and 86, a delayed account got "C267.61" alone; frozen real-time data keeps its bid and ask).
  if (q.closed && market.marketData === 'delayed') for (const code of ['84', '85', '86', '88']) delete fields[code];
  return fields;
}
