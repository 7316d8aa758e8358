// The name the overview shows. Yahoo's shortName is usually the display name, but not always: recorded
// charts carry the symbol itself (0P000071W8.TO, a fund; users of iprak/yahoofinance#170 saw the same for UK
// funds) and a truncated field padded with a fragment of the next one (WSU.DE "WashTec AG                    I"),
// and charts have been seen with a list of symbols or a stray `",`. A shortName that is not a plain name gives
// way to longName; when neither is one, there is no name (the symbol keys the entry anyway).

/** Comma-separated tokens without a space or a lower-case letter: symbols, not a name. */
const SYMBOL_LIST = /^[^\sa-z,]+(\s*,\s*[^\sa-z,]+)+$/;

export function displayName(shortName: unknown, longName: unknown, symbol: string): string | null {
  return plainName(shortName, symbol) ?? plainName(longName, symbol);
}

function plainName(value: unknown, symbol: string): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim();
  // No letter at all (a stray `",`), a quote cut out of its JSON, padding with a fragment after it.
  if (!/\p{L}/u.test(name) || /["\\]/.test(name) || /\s{2,}/.test(name)) return null;
  if (name.toUpperCase() === symbol.toUpperCase() || SYMBOL_LIST.test(name)) return null;
  return name;
}
