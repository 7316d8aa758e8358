// SYMBOL_SEARCH over the simulated universe: symbols that start with the keywords rank first, then names
// holding them, each with a matchScore in Alpha Vantage's style (share of the matched text, 4 decimals).
import type { SymbolMatch } from '../../wire/alpha-vantage/bodies.js';
import { type Instrument, UNIVERSE } from '../universe.js';
import { formatDecimal } from './format.js';
import { easternOffsetMs, HOUR_MS } from '../../core/us-market-time.js';

/** Alpha Vantage answers at most ten matches. */
const MAX_MATCHES = 10;

export function symbolSearch(keywords: string, nowMs: number): { bestMatches: SymbolMatch[] } {
  const needle = keywords.trim().toUpperCase();
  const scored = UNIVERSE.map((instrument) => ({ instrument, score: score(instrument, needle) }))
    .filter((m) => m.score > 0)
    .sort((a, b) => b.score - a.score || a.instrument.symbol.localeCompare(b.instrument.symbol))
    .slice(0, MAX_MATCHES);
  const timezone = `UTC${easternOffsetMs(nowMs) / HOUR_MS === -4 ? '-04' : '-05'}`;
  return { bestMatches: scored.map(({ instrument, score }) => match(instrument, score, timezone)) };
}

function score(instrument: Instrument, needle: string): number {
  if (needle === '') return 0;
  const { symbol } = instrument;
  if (symbol.startsWith(needle)) return needle.length / symbol.length;
  const name = instrument.name.toUpperCase();
  const at = name.indexOf(needle);
  if (at < 0) return 0;
  // Below any symbol-prefix match, higher for a longer share of the name and for a match at a word start.
  const wordStart = at === 0 || name[at - 1] === ' ' ? 1 : 0.5;
  return Math.min(0.99, (needle.length / name.length) * wordStart);
}

function match(instrument: Instrument, score: number, timezone: string): SymbolMatch {
  return {
    '1. symbol': instrument.symbol,
    '2. name': instrument.name,
    '3. type': instrument.kind === 'etf' ? 'ETF' : 'Equity',
    '4. region': 'United States',
    '5. marketOpen': '09:30',
    '6. marketClose': '16:00',
    '7. timezone': timezone,
    '8. currency': 'USD',
    '9. matchScore': formatDecimal(score, 4),
  };
}
