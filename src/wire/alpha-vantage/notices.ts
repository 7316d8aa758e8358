// The exact bodies Alpha Vantage sends, all with HTTP 200 (UPSTREAMS.md). Limit texts carry the
// configured numbers; with the defaults they are the documented texts word for word.

const DOCS = 'https://www.alphavantage.co/documentation/';
const PREMIUM = 'https://www.alphavantage.co/premium/';

export function invalidApiCall(fn: string): { 'Error Message': string } {
  const target = fn === '' ? '' : ` for ${fn}`;
  return { 'Error Message': `Invalid API call. Please retry or visit the documentation (${DOCS})${target}.` };
}

export const INVALID_API_KEY = {
  'Error Message':
    'the parameter apikey is invalid or missing. Please claim your free API key on (https://www.alphavantage.co/support/#api-key). It should take less than 20 seconds.',
} as const;

/** The older per-minute throttle notice, naming both limits. */
export function perMinuteNote(perMinute: number, perDay: number): { Note: string } {
  return {
    Note: `Thank you for using Alpha Vantage! Our standard API call frequency is ${perMinute} calls per minute and ${perDay} calls per day. Please visit ${PREMIUM} if you would like to target a higher API call frequency.`,
  };
}

/** The daily cap as the live service words it (captured December 2025): "sparingly" and "premium" beside the day's number. */
export function dailyCapInformation(perDay: number): { Information: string } {
  return {
    Information: `Thank you for using Alpha Vantage! Please consider spreading out your free API requests more sparingly. You may subscribe to any of the premium plans at ${PREMIUM} to lift the free key rate limit (${perDay} requests per day) and instantly unlock all premium endpoints`,
  };
}

/**
 * The burst refusal as it is quoted word for word in the wild (2025-2026; no citable capture of the whole
 * body, see the corpus's SOURCES.md): it names the second *and* the day *and* premium endpoints, so a
 * client cannot tell from it which limit it hit. UPSTREAMS.md's shorter text is a truncation of it.
 */
export function burstInformation(perSecond: number, perDay: number): { Information: string } {
  const rate = perSecond === 1 ? '1 request per second' : `${perSecond} requests per second`;
  return {
    Information: `Thank you for using Alpha Vantage! Please consider spreading out your free API requests more sparingly (${rate}). You may subscribe to any of the premium plans at ${PREMIUM} to lift the free key rate limit (${perDay} requests per day), raise the per-second burst limit, and instantly unlock all premium endpoints`,
  };
}

export const PREMIUM_ENDPOINT = {
  Information: `Thank you for using Alpha Vantage! This is a premium endpoint. You may subscribe to any of the premium plans at ${PREMIUM} to instantly unlock all premium endpoints`,
} as const;
