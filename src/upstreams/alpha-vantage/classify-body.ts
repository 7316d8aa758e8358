// Alpha Vantage answers HTTP 200 for everything, errors and limits included: a body is classified by
// its structure first and by the numbers its text names, never by status or by the order of phrases.
// Its wording changes over the years (the daily-cap text now says "sparingly" *and* "unlock all premium
// endpoints" *and* "(25 requests per day)"), so an unknown wording must cost a back-off, never a wrong
// error: a body whose only key is `Note` or `Information` is a refusal unless it plainly says that the
// function itself is premium or that the key is bad. Pure, so every recorded body can be tested.
import { ApiError, NotFoundAnswerError, UnreadableAnswerError } from '../../core/errors.js';

/** A limit window a refusal names. */
export type LimitWindow = 'second' | 'minute' | 'day';
/** @internal */
export const LIMIT_WINDOWS: readonly LimitWindow[] = ['second', 'minute', 'day'];

export type Classified =
  | { kind: 'data'; body: Record<string, unknown> }
  /** `windows`: the ones the text names, shortest first; empty when it names none. */
  | { kind: 'refusal'; message: string; windows: LimitWindow[] }
  | { kind: 'error'; error: ApiError };

const NOTICE_KEYS = ['Note', 'Information'];

export function classifyAlphaVantageBody(json: unknown): Classified {
  if (json === undefined)
    return { kind: 'error', error: new UnreadableAnswerError('not-json', 'Alpha Vantage sent a body that is not JSON') };
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { kind: 'error', error: new UnreadableAnswerError('body-not-object', 'Alpha Vantage sent a body that is not a JSON object') };
  }
  const body = json as Record<string, unknown>;
  const keys = Object.keys(body);
  const errorMessage = body['Error Message'];
  if (typeof errorMessage === 'string') return { kind: 'error', error: fromErrorMessage(errorMessage) };
  // Data with a notice beside it is still data: the parsers check the shape they need.
  if (keys.length > 0 && keys.every((key) => NOTICE_KEYS.includes(key))) {
    return fromNotice(keys.map((key) => String(body[key])).join(' '));
  }
  // `{}` for a data call (recorded: TIME_SERIES_DAILY for GBTC, 2019, for a symbol that worked days before
  // and after; ENI.MI and BDEV.LON in 2020 until Alpha Vantage fixed its side) is the provider failing, not an
  // unknown symbol: a 502 the quote fallback may cover, never a 404 or a back-off.
  if (keys.length === 0) return { kind: 'error', error: new UnreadableAnswerError('empty-object', 'Alpha Vantage sent an empty object') };
  return { kind: 'data', body };
}

/**
 * A `datatype=csv` answer. Errors and limits still come as JSON objects, classified as above; data is text
 * whose first line is a header of at least two columns. Anything else (an HTML page, an empty body, a JSON
 * data object) is unreadable: the caller asked for CSV.
 */
export function classifyAlphaVantageCsv(text: string, json: unknown): Classified | { kind: 'csv'; text: string } {
  if (json !== undefined) {
    const classified = classifyAlphaVantageBody(json);
    if (classified.kind !== 'data') return classified;
    return { kind: 'error', error: new UnreadableAnswerError('csv-json', 'Alpha Vantage answered JSON data to a CSV call') };
  }
  const header = text.split(/\r?\n/, 1)[0] ?? '';
  if (!/^[^,<>\r\n]+(,[^,<>\r\n]*)+$/.test(header))
    return { kind: 'error', error: new UnreadableAnswerError('csv-header', 'Alpha Vantage sent a CSV answer without a header line') };
  return { kind: 'csv', text };
}

function fromErrorMessage(text: string): ApiError {
  if (/apikey|api key/i.test(text)) return badKey();
  if (/invalid api call/i.test(text)) {
    // Our parameters are validated before the call, so the call itself is sound. Recorded answers show that
    // this text means "this function has nothing for this symbol" (IWDA.AS: GLOBAL_QUOTE answers, the daily
    // series says Invalid API call), and that it can be transient (FX_DAILY "about half the time"): the
    // symbol may well exist, so the message names the function rather than calling the symbol unknown.
    // Remembered all the same (CACHE_NOT_FOUND_SECONDS): asked again at once, it would mostly say the same.
    const fn = /\bfor ([A-Z][A-Z0-9_]*)\.?\s*$/.exec(text)?.[1];
    return new NotFoundAnswerError(`Alpha Vantage has no ${fn ?? 'such'} data for this symbol`);
  }
  // A wording we do not know: counted, so a new error text is seen.
  return new UnreadableAnswerError('error-message', 'Alpha Vantage answered with an error');
}

/**
 * A `Note`/`Information` body. A rate it names ("25 requests per day", "1 request per second") makes it a
 * refusal whatever else it says; a text naming no rate is a premium notice or a key problem only when it
 * says so plainly; anything else is a refusal of unknown window.
 */
function fromNotice(text: string): Classified {
  const windows = LIMIT_WINDOWS.filter((w) => namedWindows(text).has(w));
  if (windows.length > 0) {
    // Which of several named windows was hit ("5 calls per minute and 500 calls per day") the text cannot
    // tell: the client backs off for the shortest and moves to the next when refused again (recorded
    // answers: the Note naming both came after five calls in a minute).
    return { kind: 'refusal', message: REFUSALS[windows.length === 1 ? (windows[0] as LimitWindow) : 'several'], windows };
  }
  if (/\bthis is a premium endpoint\b/i.test(text)) {
    return { kind: 'error', error: new ApiError('PROVIDER_NOT_CONFIGURED', 'this function needs a premium Alpha Vantage plan') };
  }
  if (/api ?key/i.test(text) && /\b(invalid|missing|not valid|demo)\b/i.test(text)) return { kind: 'error', error: badKey() };
  return { kind: 'refusal', message: 'Alpha Vantage refused the call', windows: [] };
}

const REFUSALS: Record<LimitWindow | 'several', string> = {
  second: 'Alpha Vantage asked to slow down (its per-second limit)',
  minute: 'Alpha Vantage per-minute call limit reached',
  day: 'Alpha Vantage daily call limit reached',
  several: 'Alpha Vantage call limit reached',
};

/** "25 requests per day", "5 calls per minute", "1 request per second", "500 calls a day", "daily". */
const RATE = /\b\d[\d,]*\s+(?:api\s+)?(?:requests?|calls?)\s+(?:per|a|an|each|every|\/)\s*(second|minute|hour|day)\b/gi;
const WORDED = /\b(?:per|a|an|each|every)\s+(second|minute|day)\b|\b(daily)\b/gi;

function namedWindows(text: string): Set<LimitWindow> {
  const found = new Set<LimitWindow>();
  const add = (unit: string) => {
    const u = unit.toLowerCase();
    // An hourly rate is counted against the day: it refuses for longer than a minute, and the day covers it.
    found.add(u === 'second' ? 'second' : u === 'minute' ? 'minute' : 'day');
  };
  for (const match of text.matchAll(RATE)) add(match[1] as string);
  if (found.size === 0) for (const match of text.matchAll(WORDED)) add((match[1] ?? 'day') as string);
  return found;
}

function badKey(): ApiError {
  return new ApiError('UPSTREAM_ERROR', 'Alpha Vantage rejected the configured API key; check ALPHA_VANTAGE_API_KEY');
}
