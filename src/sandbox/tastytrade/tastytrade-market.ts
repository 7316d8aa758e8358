// The simulated Tastytrade market, one view read by its REST market data and its DXLink feed alike, so a
// streamed quote and a snapshot of the same moment agree. Each instrument ticks on its own grid (every
// 150 ms for the busiest, every few seconds for the quietest, eight times slower outside the regular
// session); stocks trade from 04:00 to 20:00 New York on weekdays, indices in the regular session, crypto
// always. Volume accumulates over the day.
import { usTradingDay } from '../../core/us-market-time.js';
import { type MarketSession, tickUnit, usSession } from '../ibkr/ibkr-market.js';
import { previousClose, priceAt, round, unit } from '../price-model.js';
import { findInstrument } from '../universe.js';

export type InstrumentKind = 'equity' | 'index' | 'crypto';

export interface TastytradeInstrument {
  /** Our symbol, which prices are drawn for. */
  ours: string;
  kind: InstrumentKind;
}

export interface TastytradeQuote {
  last: number;
  bid: number;
  ask: number;
  bidSize: number;
  askSize: number;
  /** The size of the tick's trade; none on a tick that only moved the quote. */
  tradeSize: number | null;
  volume: number;
  previousClose: number;
  open: number;
  /** Which tick this is: a new index is a new tick. */
  tick: number;
}

/** Tastytrade's index symbols and crypto pairs, and the universe's symbols they stand for. */
export const INDICES: Record<string, string> = { SPX: '^GSPC', VIX: '^VIX', NDX: '^IXIC', RUT: '^RUT', DJX: '^DJI' };
export const CRYPTO: Record<string, string> = { 'BTC/USD': 'BTC-USD', 'ETH/USD': 'ETH-USD' };

/** The instrument behind a REST symbol of a type, or behind a DXLink streamer symbol (no type). */
export function instrumentOf(symbol: string, kind?: InstrumentKind): TastytradeInstrument | undefined {
  const upper = symbol.toUpperCase();
  if (kind === 'index' || (kind === undefined && INDICES[upper] !== undefined))
    return INDICES[upper] === undefined ? undefined : { ours: INDICES[upper], kind: 'index' };
  const pair = upper.replace(/:CXTALP$/, '');
  if (kind === 'crypto' || (kind === undefined && upper.endsWith(':CXTALP')))
    return CRYPTO[pair] === undefined ? undefined : { ours: CRYPTO[pair], kind: 'crypto' };
  const found = findInstrument(upper.replace('/', '.'));
  return found === undefined ? undefined : { ours: found.symbol, kind: 'equity' };
}

export class TastytradeMarket {
  constructor(
    /** The US session at a moment; tests and benchmarks hold the market open. */
    readonly sessionAt: (now: number) => MarketSession = usSession,
  ) {}

  trades(instrument: TastytradeInstrument, now: number): boolean {
    if (instrument.kind === 'crypto') return true;
    const session = this.sessionAt(now);
    return instrument.kind === 'index' ? session === 'regular' : session !== 'closed';
  }

  /** How often an instrument ticks in the regular session, ms: quiet names every few seconds, busy ones several times a second. */
  tickIntervalMs(instrument: TastytradeInstrument): number {
    return Math.round(150 + unit(`tick:${instrument.ours}`) ** 2 * 3_850);
  }

  /** The instrument's quote as of its last tick at or before `now`. */
  quote(instrument: TastytradeInstrument, now: number): TastytradeQuote {
    const { ours } = instrument;
    const regular = instrument.kind === 'crypto' || this.sessionAt(now) === 'regular';
    const interval = this.tickIntervalMs(instrument) * (regular ? 1 : 8);
    const tick = Math.floor(now / interval);
    const at = tick * interval;
    const last = round(priceAt(ours, at) * (1 + (tickUnit(`noise:${ours}`, tick) - 0.5) * 0.0008), 2);
    const spread = Math.max(0.01, round(last * 0.0002, 2));
    const prev = previousClose(ours, at);
    const lots = (seed: string) => 1 + Math.floor(tickUnit(`${seed}:${ours}`, tick) * 20);
    return {
      last,
      bid: round(last - spread / 2, 2),
      ask: round(last + spread / 2, 2),
      bidSize: lots('bs'),
      askSize: lots('as'),
      tradeSize: tickUnit(`trade:${ours}`, tick) < 0.6 ? lots('ts') * 100 : null,
      volume: this.volume(ours, at),
      previousClose: round(prev, 2),
      open: round(prev * (1 + (unit(`open:${ours}`) - 0.5) * 0.01), 2),
      tick,
    };
  }

  /** Shares traded so far in the day's session (04:00-20:00 New York), in round lots. */
  private volume(ours: string, at: number): number {
    const day = usTradingDay(Math.floor(at / 86_400_000) * 86_400_000);
    const progress = Math.min(1, Math.max(0, (at - day.preOpen) / (day.postClose - day.preOpen)));
    return Math.round(((100_000 + unit(`volume:${ours}`) * 50_000_000) * progress) / 100) * 100;
  }
}
