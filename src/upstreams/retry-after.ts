// `Retry-After` arrives as seconds or as an HTTP date, sometimes not at all; callers give the fallback.

export function retryAfterMs(header: string | string[] | undefined, fallbackMs: number, now = Date.now()): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return fallbackMs;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.max(1_000, Number(text) * 1_000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return fallbackMs;
  return Math.max(1_000, at - now);
}
