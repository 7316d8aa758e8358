// What a query parameter's value may hold, on every route and the Alpha Vantage drop-in alike: the one rule
// every reader of a parameter applies (the edge to every parameter a route declares, before its schema
// validates it: plugins/app/query-values.ts; the drop-in's readers in wire/alpha-vantage/; symbol lists).
//
// Surrounding whitespace is trimmed, so that `IBM `, ` IBM` and `IBM` are one cache entry and one upstream
// call. Characters that have no place in a value are refused (400, no call), naming the parameter and the
// character, rather than dropped or trimmed: they are invisible, so a caller cannot see why two values that
// look alike answer differently (a no-break space pasted from a web page, a zero-width joiner, a right-to-left
// override that shows `MBI` as `IBM`), and a value that keeps them is a new entry and a new call each time.
import { ApiError } from './errors.js';

/** Values are echoed in messages at most this long. */
const ECHO_LIMIT = 100;

/**
 * Control (Cc) and format (Cf) characters: zero-width ones (U+200B-U+200D, U+2060, U+FEFF), direction marks,
 * embeddings, overrides and isolates (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), soft hyphens and the rest;
 * line and paragraph separators (Zl, Zp), line breaks as LF is; the no-break spaces (U+00A0, U+2007, U+202F),
 * which read as a space but are not one to a provider.
 */
const REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00A0\u2007\u202F]/u;

const CONTROL = /\p{Cc}/u;
const FORMAT = /\p{Cf}/u;
const NO_BREAK_SPACES = new Set([0xa0, 0x2007, 0x202f]);
const ZERO_WIDTH = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]);
const DIRECTION = new Set([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

/** What the refused character is, for the message. */
function kind(code: number): string {
  if (NO_BREAK_SPACES.has(code)) return 'a no-break space';
  if (ZERO_WIDTH.has(code)) return 'a zero-width character';
  if (DIRECTION.has(code)) return 'a text direction control';
  if (CONTROL.test(String.fromCodePoint(code))) return 'a control character';
  if (FORMAT.test(String.fromCodePoint(code))) return 'an invisible format character';
  return 'a line or paragraph separator';
}

/** `U+00A0`: a code point as Unicode writes it. */
function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Spaces (Unicode's space separators) at either end, the no-break ones aside: those are refused, never trimmed. */
const SURROUNDING_SPACES = /^(?:(?![\u00A0\u2007\u202F])\p{Zs})+|(?:(?![\u00A0\u2007\u202F])\p{Zs})+$/gu;

/** The value without the spaces around it; a refused character stays, for the reader of the value to refuse. */
export function trimSpaces(value: string): string {
  return value.replace(SURROUNDING_SPACES, '');
}

/** The value `name` was given, trimmed; INVALID_PARAMETER naming the parameter and the character when it holds one refused. */
export function parameterText(name: string, value: string): string {
  const found = REFUSED.exec(value);
  if (found !== null) {
    const code = found[0].codePointAt(0) as number;
    throw new ApiError('INVALID_PARAMETER', `${name} contains ${codePoint(code)} (${kind(code)}), which has no place in a value`);
  }
  return trimSpaces(value);
}

/** A caller's value as a message may show it: at most 100 characters, cut with an ellipsis. */
export function echoed(value: string): string {
  const characters = [...value];
  return characters.length <= ECHO_LIMIT ? value : `${characters.slice(0, ECHO_LIMIT - 1).join('')}…`;
}
