// Decimal strings as Alpha Vantage writes them: fixed decimals, a minus sign only for negative values
// (never `-0.0000`), no plus sign.

export function formatDecimal(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}
