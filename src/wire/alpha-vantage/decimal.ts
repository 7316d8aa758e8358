// Upstream numbers arrive as strings, sometimes with thousands separators; we re-render them with a
// fixed number of decimals so every response has one format.

/** The number a decimal string holds ("1,234.50", "-0.66", "0.5852%"), or undefined. */
export function parseDecimal(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw !== 'string') return undefined;
  const cleaned = raw.trim().replace(/,/g, '').replace(/%$/, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(cleaned)) return undefined;
  return Number(cleaned);
}

/** `toFixed` without "-0.0000". */
export function fixed(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}
