// Brokers send numbers as numbers, as decimal strings, with thousands separators ("1,300"), with
// magnitude suffixes ("50.2M") or a trailing "%". One parser reads them all.

const SUFFIX_EXPONENT: Record<string, number> = { K: 3, M: 6, B: 9, T: 12 };
const NUMBER = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:e([+-]?\d+))?([KMBT])?$/i;

/** The number `raw` holds, or null when it holds none (absent, empty, "N/A", garbage). */
export function toNumber(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (typeof raw !== 'string') return null;
  const cleaned = raw.trim().replace(/,/g, '').replace(/%$/, '');
  const match = NUMBER.exec(cleaned);
  if (match === null) return null;
  const [, mantissa, exponent, suffix] = match;
  // Shifting the decimal exponent keeps "50.2M" exactly 50200000 (50.2 * 1e6 is not).
  const shift = Number(exponent ?? 0) + (suffix === undefined ? 0 : (SUFFIX_EXPONENT[suffix.toUpperCase()] ?? 0));
  const value = Number(`${mantissa}e${shift}`);
  return Number.isFinite(value) ? value : null;
}

export function roundTo(value: number, decimals: number): number {
  const f = 10 ** decimals;
  const rounded = Math.round(value * f) / f;
  return Object.is(rounded, -0) ? 0 : rounded;
}

/** Change and percent change from a last price and a previous close; nulls when either is unknown. */
export function changeFrom(last: number | null, previousClose: number | null): { change: number | null; changePercent: number | null } {
  if (last === null || previousClose === null) return { change: null, changePercent: null };
  const change = roundTo(last - previousClose, 6);
  const changePercent = previousClose === 0 ? null : roundTo((change / previousClose) * 100, 4);
  return { change, changePercent };
}

/** A string field, or null when absent or blank. */
export function toText(raw: unknown): string | null {
  if (typeof raw === 'string') return raw.trim() === '' ? null : raw.trim();
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  return null;
}
