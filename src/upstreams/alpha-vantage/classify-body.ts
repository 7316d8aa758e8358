// Alpha Vantage answers HTTP 200 for everything, errors and limits included: a body is classified by
// its structure first and by the numbers its text names, never by status or by the order of phrases.
// Its wording changes over the years (the daily-cap text now says "sparingly" *and* "unlock all premium
// endpoints" *and* "(25 requests per day)"), so an unknown wording must cost a back-off, never a wrong
// error: a body whose only key is `Note` or `Information` is a refusal unless it plainly says that the
// function itself is premium or that the key is bad. Pure, so every recorded body can be tested.
import { ApiError } from '../../errors.js';

/** The window a refusal names; `undefined` when it names none (the caller backs off, escalating). */
export type LimitWindow = 'second' | 'minute' | 'day';

export type Classified =
  | { kind: 'data'; body: Record<string, unknown> }
  | { kind: 'refusal'; message: string; window: LimitWindow | undefined }
  | { kind: 'error'; error: ApiError };

const NOTICE_KEYS = ['Note', 'Information'];

export function classifyAlphaVantageBody(json: unknown): Classified {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', 'Alpha Vantage sent a body that is not a JSON object') };
  }
  const body = json as Record<string, unknown>;
  const keys = Object.keys(body);
  const errorMessage = body['Error Message'];
  if (typeof errorMessage === 'string') return { kind: 'error', error: fromErrorMessage(errorMessage) };
  // Data with a notice beside it is still data: the parsers check the shape they need.
  if (keys.length > 0 && keys.every((key) => NOTICE_KEYS.includes(key))) {
    return fromNotice(keys.map((key) => String(body[key])).join(' '));
  }
  if (keys.length === 0) return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', 'Alpha Vantage sent an empty body') };
  return { kind: 'data', body };
}

function fromErrorMessage(text: string): ApiError {
  if (/apikey|api key/i.test(text)) return badKey();
  if (/invalid api call/i.test(text)) {
    // Our parameters are validated before the call, so an invalid call means the symbol is unknown upstream.
    return new ApiError('SYMBOL_NOT_FOUND', 'Alpha Vantage has no data for this symbol');
  }
  return new ApiError('UPSTREAM_ERROR', 'Alpha Vantage answered with an error');
}

/**
 * A `Note`/`Information` body. A rate it names ("25 requests per day", "1 request per second") makes it a
 * refusal whatever else it says; a text naming no rate is a premium notice or a key problem only when it
 * says so plainly; anything else is a refusal of unknown window.
 */
function fromNotice(text: string): Classified {
  const windows = namedWindows(text);
  if (windows.size > 0) {
    // Several windows ("5 calls per minute and 500 calls per day") cannot tell which one was hit: the
    // longest, since guessing short spends calls the provider will refuse.
    const window = windows.has('day') ? 'day' : windows.has('minute') ? 'minute' : 'second';
    return { kind: 'refusal', message: REFUSALS[window], window };
  }
  if (/\bthis is a premium endpoint\b/i.test(text)) {
    return { kind: 'error', error: new ApiError('PROVIDER_NOT_CONFIGURED', 'this function needs a premium Alpha Vantage plan') };
  }
  if (/api ?key/i.test(text) && /\b(invalid|missing|not valid|demo)\b/i.test(text)) return { kind: 'error', error: badKey() };
  return { kind: 'refusal', message: 'Alpha Vantage refused the call', window: undefined };
}

const REFUSALS: Record<LimitWindow, string> = {
  second: 'Alpha Vantage asked to slow down (its per-second limit)',
  minute: 'Alpha Vantage per-minute call limit reached',
  day: 'Alpha Vantage daily call limit reached',
};

/** "25 requests per day", "5 calls per minute", "1 request per second", "500 calls a day", "daily". */
const RATE = /\b\d[\d,]*\s+(?:api\s+)?(?:requests?|calls?)\s+(?:per|a|an|each|every|\/)\s*(second|minute|hour|day)\b/gi;
const WORDED = /\b(?:per|a|an|each|every)\s+(second|minute|day)\b|\b(daily)\b/gi;

export function namedWindows(text: string): Set<LimitWindow> {
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
