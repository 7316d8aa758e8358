// The fixed list of error codes this service answers with, rendered in one body shape at the edge.

const ERROR_STATUS = {
  MISSING_PARAMETER: 400,
  INVALID_PARAMETER: 400,
  INVALID_CLIENT_KEY: 401,
  BROKER_FORBIDDEN: 403,
  CLIENT_KEY_FORBIDDEN: 403,
  MCP_FORBIDDEN: 403,
  NOT_FOUND: 404,
  SYMBOL_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  RATE_LIMITED: 429,
  QUOTA_EXHAUSTED: 429,
  CALLER_SHARE_SPENT: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  PROVIDER_NOT_CONFIGURED: 503,
  BROKER_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  UPSTREAM_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface ApiErrorOptions {
  /** Seconds until a retry can succeed; rendered as `Retry-After`. */
  retryAfterSeconds?: number;
  /** Extra response headers (e.g. `Allow`). */
  headers?: Record<string, string>;
  /** 401 rather than the code's 403: credentials were sent and are wrong (RFC 9110 §15.5.2). */
  unauthenticated?: boolean;
  cause?: unknown;
  /**
   * The words for a caller the broker rules do not admit, where `message` says more about the private side (the
   * outbound proxy's address, the networks allowed): the edge chooses, and the log keeps `message`.
   */
  publicMessage?: string;
}

/** An error whose message is safe to show to a caller: it never holds a key, URL or stack. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;
  /** What any caller may hear; `message` itself unless the error says more than that (ApiErrorOptions). */
  readonly publicMessage: string;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.publicMessage = options.publicMessage ?? message;
    this.status = options.unauthenticated === true ? 401 : ERROR_STATUS[code];
    this.retryAfterSeconds = options.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfterSeconds));
    this.headers = options.headers ?? {};
  }
}

/**
 * The upstream refused for its own limits (an Alpha Vantage `Note`/`Information` body, an HTTP 429).
 * Budget guards back off on it; the cache never stores it. `drift` names a refusal worded in a way the
 * classifier did not recognise: handled (backed off), and counted so the change is seen.
 */
export class UpstreamRefusalError extends ApiError {
  constructor(
    message: string,
    retryAfterSeconds: number,
    readonly drift?: string,
  ) {
    super('QUOTA_EXHAUSTED', message, { retryAfterSeconds });
    this.name = 'UpstreamRefusalError';
  }
}

/**
 * The upstream answered, but not in a shape this service can read: its wire format may have drifted.
 * `drift` is a short stable reason (a metrics label, e.g. `quote-field`); the message says what was wrong.
 */
export class UnreadableAnswerError extends ApiError {
  constructor(
    readonly drift: string,
    message: string,
  ) {
    super('UPSTREAM_ERROR', message);
    this.name = 'UnreadableAnswerError';
  }
}

/** The drift reason an error carries, if it tells of an answer the service could not (fully) read. */
export function driftOf(error: unknown): string | undefined {
  if (error instanceof UnreadableAnswerError || error instanceof UpstreamRefusalError) return error.drift;
  // An error reported under another code (the broker unavailable, say) may still stem from an unreadable answer.
  return error instanceof ApiError && error.cause !== undefined ? driftOf(error.cause) : undefined;
}

/** How the cache holds a "not found" it answers with: until when, and whether this answer asked the upstream. */
export interface RememberedNotFound {
  /** When the cache forgets it (ms since epoch): the upstream is asked again after. */
  until: number;
  /** `X-Cache`: MISS when the upstream was asked for this answer (or one it waited on), HIT when it was not. */
  cache: 'HIT' | 'MISS';
}

/**
 * The upstream answered that it has no data for this symbol or function: Alpha Vantage's "Invalid API call"
 * or empty `Global Quote`, Yahoo's 404 "No data found". An answer, not a failure: the cache remembers it
 * (CACHE_NOT_FOUND_SECONDS) and answers it again, same code and message, without asking. `remembered` is set
 * once the cache holds it.
 */
export class NotFoundAnswerError extends ApiError {
  constructor(
    message: string,
    readonly remembered?: RememberedNotFound,
  ) {
    super('SYMBOL_NOT_FOUND', message, remembered === undefined ? {} : { headers: { 'x-cache': remembered.cache } });
    this.name = 'NotFoundAnswerError';
  }
}

/** Our own budget guard declined to send the call. */
export class BudgetExhaustedError extends ApiError {
  constructor(message: string, retryAfterSeconds: number) {
    super('QUOTA_EXHAUSTED', message, { retryAfterSeconds });
    this.name = 'BudgetExhaustedError';
  }
}

/**
 * Our budget guard declined to send the call for this caller: the budget is not spent, but what is left of
 * it is kept for callers that have spent less than their fair share (BUDGET_RESERVE). `accounts`: whose
 * share it was (a stream topic's poll asks for every caller holding the topic), so that a caller sharing a
 * single-flight call with them can try on its own account.
 */
export class CallerShareSpentError extends ApiError {
  constructor(
    message: string,
    retryAfterSeconds: number,
    readonly accounts: readonly string[],
  ) {
    super('CALLER_SHARE_SPENT', message, { retryAfterSeconds });
    this.name = 'CallerShareSpentError';
  }
}

/**
 * Refused before any call, by the plan the key is on: a premium function asked on a free plan. Like a
 * budget refusal it is no upstream call; the message is the provider's own notice, which clients recognise.
 */
export class PlanRefusalError extends ApiError {
  constructor(message: string) {
    super('PROVIDER_NOT_CONFIGURED', message);
    this.name = 'PlanRefusalError';
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; status: number; requestId: string };
}

/** The one body; in public words unless the edge, knowing the caller local, passes the full message. */
export function errorBody(error: ApiError, requestId: string, message = error.publicMessage): ErrorBody {
  return { error: { code: error.code, message, status: error.status, requestId } };
}

/** `proxy`: the outbound proxy refused the call or cannot be reached; `certificate`: the upstream's TLS certificate was not trusted. */
export type TransportFailure = 'timeout' | 'unreachable' | 'reset' | 'too_large' | 'proxy' | 'certificate';

/**
 * The upstream could not be reached or did not answer in time; nothing was learned from its body. A caller the
 * broker rules do not admit hears the usual words; a proxy's or a certificate's problem only that the upstream
 * could not be reached, since their words name the proxy and the settings behind it.
 */
export class UpstreamTransportError extends ApiError {
  /** `message`: in place of the failure's usual words (a proxy's or a certificate's problem says which). */
  constructor(
    readonly upstream: string,
    readonly failure: TransportFailure,
    cause: unknown,
    message?: string,
  ) {
    const usual = {
      timeout: `${upstream} did not answer in time`,
      unreachable: `${upstream} is unreachable`,
      reset: `${upstream} closed the connection`,
      too_large: `${upstream} sent a body larger than allowed`,
      proxy: `${upstream} was not reached: the outbound proxy failed`,
      certificate: `${upstream}'s TLS certificate was refused`,
    }[failure];
    const publicMessage = failure === 'proxy' || failure === 'certificate' ? `${upstream} could not be reached` : usual;
    super(failure === 'timeout' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR', message ?? usual, { cause, publicMessage });
    this.name = 'UpstreamTransportError';
  }
}
