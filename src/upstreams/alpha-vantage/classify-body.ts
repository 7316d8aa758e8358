// Alpha Vantage answers HTTP 200 for everything, errors and limits included: a body is classified by
// its keys and text, never by status. Pure, so every recorded body can be tested.
import { ApiError } from '../../errors.js';

export type Classified =
  | { kind: 'data'; body: Record<string, unknown> }
  | { kind: 'refusal'; message: string; retryAfterMs: number }
  | { kind: 'error'; error: ApiError };

const MINUTE = 60_000;
const HOUR = 3_600_000;

export function classifyAlphaVantageBody(json: unknown): Classified {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', 'Alpha Vantage sent a body that is not a JSON object') };
  }
  const body = json as Record<string, unknown>;
  const errorMessage = body['Error Message'];
  if (typeof errorMessage === 'string') return { kind: 'error', error: fromErrorMessage(errorMessage) };
  const note = body.Note ?? body.Information;
  if (typeof note === 'string') return fromInformation(note);
  if (Object.keys(body).length === 0) return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', 'Alpha Vantage sent an empty body') };
  return { kind: 'data', body };
}

function fromErrorMessage(text: string): ApiError {
  if (/apikey|api key/i.test(text)) {
    return new ApiError('UPSTREAM_ERROR', 'Alpha Vantage rejected the configured API key; check ALPHA_VANTAGE_API_KEY');
  }
  if (/invalid api call/i.test(text)) {
    // Our parameters are validated before the call, so an invalid call means the symbol is unknown upstream.
    return new ApiError('SYMBOL_NOT_FOUND', 'Alpha Vantage has no data for this symbol');
  }
  return new ApiError('UPSTREAM_ERROR', 'Alpha Vantage answered with an error');
}

function fromInformation(text: string): Classified {
  if (/premium endpoint|premium plans? .*unlock/i.test(text)) {
    return { kind: 'error', error: new ApiError('PROVIDER_NOT_CONFIGURED', 'this function needs a premium Alpha Vantage plan') };
  }
  if (/api ?key/i.test(text) && /invalid|missing|not valid/i.test(text)) {
    return { kind: 'error', error: new ApiError('UPSTREAM_ERROR', 'Alpha Vantage rejected the configured API key; check ALPHA_VANTAGE_API_KEY') };
  }
  if (/per second|sparingly/i.test(text)) return refusal('Alpha Vantage asked to slow down (1 request per second)', 2_000);
  // The older Note names both limits ("5 calls per minute and 500 calls per day"): minute wins.
  if (/per minute|call frequency/i.test(text)) return refusal('Alpha Vantage per-minute call limit reached', MINUTE);
  if (/per day|daily/i.test(text)) return refusal('Alpha Vantage daily call limit reached', HOUR);
  // A notice we cannot read is still a refusal: backing off costs nothing, guessing wrong costs quota.
  return refusal('Alpha Vantage refused the call', MINUTE);
}

function refusal(message: string, retryAfterMs: number): Classified {
  return { kind: 'refusal', message, retryAfterMs };
}
