// What a Client Portal Gateway answer means. The status code and the body's shape say most of it: 429 is
// pacing, 401 is a refused login, a JSON object with an `error` text is a refusal, anything else JSON is
// data. The refusal's text is prose, and prose is not a protocol: the wordings below are only fast paths.
// A refusal no pattern claims, or that two claim, is `unknown`, and the gateway (ibkr-gateway.ts) confirms
// it the way the gateway lets it, by reading its auth status, so a new wording costs a status check and a
// retry, never a wrong error code. Pure, so every recorded answer can be tested, and so the websocket
// client can classify the error frames it receives with the same meanings.

/** What a refusal's text says, as far as known wordings tell. @internal */
export type RefusalMeaning =
  /** No brokerage session (or it lapsed): starting one (ssodh/init) mends it. */
  | 'no_session'
  /** The session has not read its account list yet (after a reset, say): reading it mends it. */
  | 'accounts_first'
  /** An answer about the caller's input: the contract search knows no such symbol. */
  | 'not_found'
  | 'unknown';

export type GatewayAnswer =
  | { kind: 'ok'; json: unknown }
  /** HTTP 401: the gateway refused the login itself, or its brokerage session is not authenticated. */
  | { kind: 'logged_out' }
  | { kind: 'rate_limited'; retryAfterSeconds: number | undefined }
  /** A refusal in the gateway's JSON shape, whatever its status (2xx included): its meaning does not depend on it. */
  | { kind: 'refused'; status: number; meaning: RefusalMeaning; wording: string; json: unknown }
  /** Not an answer in the gateway's format; `drift` when it came with a success status (a reason for UnreadableAnswerError). */
  | { kind: 'error'; status: number; message: string; drift?: string };

// Users' reports (test/fixtures/recorded/ibkr/SOURCES.md): "Init session first", "Bad Request: no bridge",
// "not authenticated"; "Please query /accounts first" from public clients' code.
const WORDINGS: Record<Exclude<RefusalMeaning, 'unknown'>, RegExp> = {
  no_session: /init session first|\bno bridge\b|not authenticated|no session|session (is )?(expired|invalid)/i,
  accounts_first: /query \/accounts first/i,
  not_found: /^no symbol found$/i,
};

/** @internal */
export function refusalMeaning(wording: string): RefusalMeaning {
  const claimed = (Object.keys(WORDINGS) as (keyof typeof WORDINGS)[]).filter((meaning) => WORDINGS[meaning].test(wording.trim()));
  return claimed.length === 1 ? (claimed[0] as RefusalMeaning) : 'unknown';
}

export function classifyGatewayAnswer(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  json: unknown,
): GatewayAnswer {
  if (status === 429) return { kind: 'rate_limited', retryAfterSeconds: retryAfter(headers['retry-after']) };
  if (status === 401) return { kind: 'logged_out' };
  const wording = errorText(json);
  if (wording !== undefined) return { kind: 'refused', status, meaning: refusalMeaning(wording), wording, json };
  if (status >= 200 && status < 300) {
    if (json === undefined) return { kind: 'error', status, message: 'the IBKR gateway sent a body that is not JSON', drift: 'not-json' };
    return { kind: 'ok', json };
  }
  if (status === 411) return { kind: 'error', status, message: 'the IBKR gateway refused a request without a JSON body' };
  return { kind: 'error', status, message: `the IBKR gateway answered HTTP ${status}` };
}

/** The `error` text of a gateway error body (`{"error":"…","statusCode":400}`), if any. @internal */
export function errorText(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const error = (json as Record<string, unknown>).error;
  return typeof error === 'string' && error.trim() !== '' ? error : undefined;
}

function retryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
