// Deterministic prices for the simulators: the same symbol at the same moment gives the same price in
// every simulator and every run, and prices drift slowly (a few percent a day) so caches visibly age.

const DAY_MS = 86_400_000;

/** FNV-1a: a stable 32-bit hash of a string. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A deterministic number in [0, 1) for a seed string. */
export function unit(seed: string): number {
  return hash(seed) / 4_294_967_296;
}

/** The level a symbol moves around: crypto and indices high, stocks between 5 and 700. */
export function basePrice(symbol: string): number {
  const s = symbol.toUpperCase();
  if (s.startsWith('BTC')) return 65_000;
  if (s.startsWith('ETH')) return 3_200;
  if (s === '^GSPC' || s === 'SPX') return 5_200;
  if (s === '^DJI') return 39_000;
  if (s === '^IXIC') return 16_300;
  if (s === '^RUT') return 2_050;
  if (s === '^VIX') return 15;
  if (s === 'GC=F') return 2_350;
  if (s === 'SI=F') return 28;
  if (s === 'CL=F') return 78;
  if (s === 'NG=F') return 2.2;
  return 5 + Math.round(unit(`base:${s}`) * 69_500) / 100;
}

/** Smooth multi-day waves plus a small intraday wobble, all derived from the symbol. */
export function priceAt(symbol: string, timeMs: number): number {
  const s = symbol.toUpperCase();
  const days = timeMs / DAY_MS;
  const phase = unit(`phase:${s}`) * 2 * Math.PI;
  const vol = 0.01 + unit(`vol:${s}`) * 0.03;
  const wave =
    Math.sin(days / 9 + phase) * vol * 4 + Math.sin(days / 2.3 + phase * 2) * vol * 1.5 + Math.sin(days * 24 + phase * 3) * vol * 0.3;
  return round(basePrice(s) * (1 + wave), 4);
}

/** Start (00:00 UTC) of the day that holds `timeMs`. */
function dayStart(timeMs: number): number {
  return Math.floor(timeMs / DAY_MS) * DAY_MS;
}

/** The close of the day before `timeMs` (21:00 UTC, about the US close). */
export function previousClose(symbol: string, timeMs: number): number {
  return priceAt(symbol, dayStart(timeMs) - DAY_MS + 21 * 3_600_000);
}

export interface Bar {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

export function round(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
