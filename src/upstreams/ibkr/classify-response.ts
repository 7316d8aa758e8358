// What a Client Portal Gateway answer means, decided from status and body together: the gateway speaks
// 401 for "nobody logged in", a 400 "Init session first" for "logged in, no brokerage session", 429 for
// pacing, and JSON for everything else. Pure, so every recorded answer can be tested.

export type GatewayAnswer =
  | { kind: 'ok'; json: unknown }
  | { kind: 'logged_out' }
  | { kind: 'no_session' }
  | { kind: 'rate_limited'; retryAfterSeconds: number | undefined }
  /** `drift`: the answer was not in the gateway's format (a reason for UnreadableAnswerError). */
  | { kind: 'error'; status: number; message: string; drift?: string };

const NO_SESSION = /init session first|not authenticated|no session|session (is )?(expired|invalid)/i;

export function classifyGatewayAnswer(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  json: unknown,
): GatewayAnswer {
  if (status === 429) return { kind: 'rate_limited', retryAfterSeconds: retryAfter(headers['retry-after']) };
  if (status === 401) return { kind: 'logged_out' };
  const error = errorText(json);
  if (error !== undefined && NO_SESSION.test(error)) return { kind: 'no_session' };
  // "No symbol found" is an answer (the contract search found nothing), whatever status carries it.
  if (error !== undefined && /no symbol found/i.test(error)) return { kind: 'ok', json };
  if (status >= 200 && status < 300) {
    if (json === undefined) return { kind: 'error', status, message: 'the IBKR gateway sent a body that is not JSON', drift: 'not-json' };
    return { kind: 'ok', json };
  }
  if (status === 411) return { kind: 'error', status, message: 'the IBKR gateway refused a request without a JSON body' };
  return { kind: 'error', status, message: `the IBKR gateway answered HTTP ${status}` };
}

/** The `error` text of a gateway error body (`{"error":"…","statusCode":400}`), if any. */
export function errorText(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const error = (json as Record<string, unknown>).error;
  return typeof error === 'string' ? error : undefined;
}

function retryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
