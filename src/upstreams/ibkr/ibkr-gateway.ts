// The Client Portal Gateway on the wire: every call paced (with a margin under the gateway's 10 a second),
// every answer classified by meaning (classify-response.ts), a 429 turned into a back-off, and a data call
// the gateway refuses given one mending and one retry: a known "no brokerage session" wording starts a
// session at once (shared by every caller that meets it); a refusal no wording explains is first checked
// against the gateway's own auth status, so a new wording costs one status check and one retry and is
// never taken for an answer about the caller's input.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiError, UnreadableAnswerError, UpstreamTransportError } from '../../core/errors.js';
import { IBKR, UPSTREAMS } from '../../core/upstream-ids.js';
import { type Pacer, RequestPacer, type RequestPacerOptions } from '../../broker/request-pacer.js';
import type { HttpClient, UpstreamResponse } from '../http-client.js';
import { classifyGatewayAnswer, type GatewayAnswer } from './classify-response.js';
import { parseAuthStatus } from './parse-session.js';

/** Why a session needs recovering: no brokerage session was ever started, or it was lost. */
export type SessionProblem = 'no_session' | 'not_authenticated';

/** Where mending the session left it: ready for the retry, or refused because nobody is logged in, or no session would start. */
export type SessionOutcome = 'ready' | SessionFailure;
export type SessionFailure = 'logged_out' | 'not_started';

export interface IbkrGatewayOptions {
  /** Base URL ending in /v1/api. */
  url: string;
  http: HttpClient;
  logger: Logger;
  pacer?: Pacer;
  /** Auth status checks after a recovery call before giving up. */
  recoveryPolls?: number;
  recoveryPollMs?: number;
  /** After a failed recovery, fail fast for this long instead of trying again. */
  recoveryCooldownMs?: number;
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  /** Raw query string (values already encoded). */
  query?: string;
  body?: unknown;
  /**
   * Runs before the call, and again with `force` before the retry that follows a mending: the account
   * list a session's data calls need read first (/iserver/accounts before snapshots), which a new or
   * reset session has not read.
   */
  prepare?: (force: boolean) => Promise<void>;
}

/** A data call refused for want of a usable session, after the one mending it deserved. */
export class SessionRefusedError extends ApiError {
  constructor(readonly outcome: SessionFailure) {
    super(
      'BROKER_UNAVAILABLE',
      outcome === 'logged_out'
        ? 'the IBKR gateway is not logged in: log in to the Client Portal Gateway in a browser'
        : 'the IBKR gateway has no brokerage session and could not start one: close other IBKR sessions (TWS, the mobile app) or log in to the Client Portal Gateway again',
      { retryAfterSeconds: 30 },
    );
    this.name = 'SessionRefusedError';
  }
}

// The gateway's own limits: 10 requests in any second (a penalty box for violators), /portfolio/accounts once per 5 s.
const DEFAULT_IBKR_REQUESTS_PER_SECOND = 8;

/**
 * Our pacing, with a margin under the gateway's: `perSecond` (default 8) in any second, spread evenly
 * (125 ms apart at 8). Eleven arrivals within one second would then need departures squeezed by more
 * than 250 ms of jitter (network plus event-loop delay), which is far beyond a gateway on the same host.
 */
export function ibkrPacerOptions(perSecond = DEFAULT_IBKR_REQUESTS_PER_SECOND): RequestPacerOptions {
  return {
    name: `the ${UPSTREAMS[IBKR].label}`,
    perWindow: perSecond,
    windowMs: 1_000,
    minIntervalMs: Math.ceil(1_000 / perSecond),
    // 10 % over the gateway's 5 s, for the same jitter.
    spacing: { '/portfolio/accounts': 5_500 },
    maxWaitMs: 10_000,
    baseBackOffMs: 5_000,
    maxBackOffMs: 600_000,
  };
}

/** What `send` returns: a 429 is thrown as a back-off instead. */
export type SentAnswer = Exclude<GatewayAnswer, { kind: 'rate_limited' }>;

/** The brokerage session serves /iserver; the login alone serves /portfolio (IBKR's tutorial, SOURCES.md). */
const isBrokeragePath = (path: string) => path.startsWith('/iserver/');

export class IbkrGateway {
  readonly origin: string;
  readonly pacer: Pacer;
  /** Increases with every recovered session: per-session preparations compare against it. */
  epoch = 0;
  /**
   * A data call ended refused for want of a session, and no /iserver data answer came since: the auth
   * status can claim a session the data calls refuse, and health believes the data calls.
   */
  dataRefused = false;
  private recovering: Promise<SessionOutcome> | undefined;
  private confirming: Promise<SessionOutcome> | undefined;
  /** The cookies the gateway last set (name=value pairs): the websocket's upgrade carries them. */
  cookies: string | undefined;
  private recoveryFailedAt = 0;
  private lastFailure: SessionFailure = 'not_started';

  constructor(private readonly options: IbkrGatewayOptions) {
    this.origin = new URL(options.url).origin;
    this.pacer = options.pacer ?? new RequestPacer(ibkrPacerOptions());
  }

  /** One paced call, classified. Throws for transport failures and 429 (after backing off). */
  async send(path: string, options: CallOptions = {}): Promise<SentAnswer> {
    const method = options.method ?? 'GET';
    await this.pacer.acquire(path);
    const url = `${this.options.url}${path}${options.query ? `?${options.query}` : ''}`;
    let res: UpstreamResponse;
    try {
      // The gateway answers 411 to a POST without a JSON body, even an empty one.
      res = await this.options.http.request(url, { method, body: method === 'POST' ? (options.body ?? {}) : undefined });
    } catch (error) {
      throw gatewayTransportError(error);
    }
    const setCookie = res.headers['set-cookie'];
    if (setCookie !== undefined) this.cookies = cookiePairs(setCookie);
    const answer = classifyGatewayAnswer(res.status, res.headers, res.json);
    if (answer.kind === 'rate_limited') {
      const waitMs = this.pacer.refused(answer.retryAfterSeconds);
      this.options.logger.warn({ upstream: 'ibkr', path, backOffMs: waitMs }, 'IBKR gateway answered 429; backing off');
      throw this.pacer.unavailable('the IBKR gateway is pacing our requests (429)', waitMs);
    }
    this.pacer.succeeded();
    return answer;
  }

  /** A call whose answer must be data: a refusal gets one mending and one retry. */
  async call<T>(path: string, parse: (json: unknown) => T, options: CallOptions = {}): Promise<T> {
    await options.prepare?.(false);
    const epoch = this.epoch;
    const first = await this.send(path, options);
    const mending = this.mending(path, first, epoch);
    if (mending === undefined) return this.read(path, first, parse);
    const outcome = await mending;
    if (outcome !== 'ready') throw this.refused(outcome);
    await options.prepare?.(true);
    const retry = await this.send(path, options);
    if (retry.kind === 'logged_out' || (retry.kind === 'refused' && retry.meaning === 'no_session')) {
      // The session came back by the gateway's own account, yet data is still refused: no better within the cooldown.
      this.recoveryFailed('not_started');
      throw this.refused('not_started');
    }
    return this.read(path, retry, parse);
  }

  /** What a refused or failed answer needs before its one retry, or undefined when it is final. */
  private mending(path: string, answer: SentAnswer, epoch: number): Promise<SessionOutcome> | undefined {
    const unexplained = answer.kind === 'error' || (answer.kind === 'refused' && answer.meaning === 'unknown');
    const session = answer.kind === 'logged_out' || (answer.kind === 'refused' && answer.meaning === 'no_session');
    // A session started since this call was sent is the mending it needed.
    if (session && epoch !== this.epoch) return Promise.resolve('ready');
    if (answer.kind === 'logged_out') return this.recover('not_authenticated');
    if (session) return this.recover('no_session');
    if (answer.kind === 'refused' && answer.meaning === 'accounts_first') return Promise.resolve('ready');
    if (unexplained && isBrokeragePath(path)) return this.confirm();
    return undefined;
  }

  private read<T>(path: string, answer: SentAnswer, parse: (json: unknown) => T): T {
    switch (answer.kind) {
      case 'ok':
        if (isBrokeragePath(path)) this.dataRefused = false;
        return parse(answer.json);
      case 'logged_out':
        throw this.refused('logged_out');
      case 'error':
        if (answer.drift !== undefined) throw new UnreadableAnswerError(answer.drift, answer.message);
        throw new ApiError('UPSTREAM_ERROR', answer.message);
      case 'refused':
        if (answer.meaning === 'not_found') throw new ApiError('SYMBOL_NOT_FOUND', 'the IBKR gateway knows no such symbol');
        if (answer.meaning === 'no_session') throw this.refused('not_started');
        // A refusal with a success status is a body in an unexpected shape: the parser names the drift.
        if (answer.status < 300) return parse(answer.json);
        throw new ApiError('UPSTREAM_ERROR', `the IBKR gateway refused the request (HTTP ${answer.status})`);
    }
  }

  private refused(outcome: SessionFailure): SessionRefusedError {
    this.dataRefused = true;
    return new SessionRefusedError(outcome);
  }

  /**
   * A refusal no wording explains may still be a session problem: the gateway's auth status says, once
   * for every caller that meets it at the same time. A session it shows missing is started; one it shows
   * ready leaves the retry to decide.
   */
  private confirm(): Promise<SessionOutcome> {
    this.confirming ??= this.readSession().finally(() => {
      this.confirming = undefined;
    });
    return this.confirming;
  }

  private async readSession(): Promise<SessionOutcome> {
    const status = await this.send('/iserver/auth/status');
    if (status.kind === 'logged_out') return this.recover('not_authenticated');
    if (status.kind !== 'ok') return 'ready';
    const auth = parseAuthStatus(status.json);
    if (auth.authenticated && auth.established) return 'ready';
    return this.recover(auth.established ? 'not_authenticated' : 'no_session');
  }

  /**
   * One attempt to get an authenticated brokerage session back, shared by concurrent callers: start
   * one (ssodh/init) or ask for re-authentication, then read the auth status. `logged_out` when the
   * gateway itself is logged out (a person must log in), `not_started` when the session did not come back.
   */
  recover(problem: SessionProblem): Promise<SessionOutcome> {
    if (this.recovering !== undefined) return this.recovering;
    if (Date.now() - this.recoveryFailedAt < (this.options.recoveryCooldownMs ?? 10_000)) return Promise.resolve(this.lastFailure);
    this.recovering = this.attemptRecovery(problem)
      .then((outcome) => {
        if (outcome === 'ready') this.epoch += 1;
        else this.recoveryFailed(outcome);
        this.options.logger.info({ upstream: 'ibkr', problem, outcome }, 'IBKR session recovery attempt');
        return outcome;
      })
      .catch((error: unknown) => {
        this.recoveryFailed('not_started');
        throw error;
      })
      .finally(() => {
        this.recovering = undefined;
      });
    return this.recovering;
  }

  private recoveryFailed(outcome: SessionFailure): void {
    this.recoveryFailedAt = Date.now();
    this.lastFailure = outcome;
  }

  private async attemptRecovery(problem: SessionProblem): Promise<SessionOutcome> {
    const start =
      problem === 'no_session'
        ? await this.send('/iserver/auth/ssodh/init', { method: 'POST', body: { publish: true, compete: true } })
        : await this.send('/iserver/reauthenticate', { method: 'POST', body: {} });
    if (start.kind === 'logged_out') return 'logged_out';
    const polls = this.options.recoveryPolls ?? 4;
    for (let i = 0; i < polls; i += 1) {
      const status = await this.send('/iserver/auth/status');
      if (status.kind === 'logged_out') return 'logged_out';
      if (status.kind === 'ok') {
        const auth = parseAuthStatus(status.json);
        if (auth.authenticated && auth.established) return 'ready';
      }
      if (i < polls - 1) await sleep(this.options.recoveryPollMs ?? 250);
    }
    return 'not_started';
  }
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/;

/** Connection refused answers at once: the caller learns "gateway down" without waiting for a timeout. */
function gatewayTransportError(error: unknown): ApiError {
  if (!(error instanceof UpstreamTransportError))
    return error instanceof ApiError ? error : new ApiError('UPSTREAM_ERROR', 'the IBKR gateway call failed');
  const cause = error.cause as { code?: string; cause?: { code?: string } } | undefined;
  const code = cause?.code ?? cause?.cause?.code ?? '';
  if (TLS_CODES.test(code)) {
    return new ApiError(
      'BROKER_UNAVAILABLE',
      "the IBKR gateway's TLS certificate was refused: set IBKR_TLS_VERIFY=false for its self-signed certificate",
      { retryAfterSeconds: 60 },
    );
  }
  switch (error.failure) {
    case 'timeout':
      return new ApiError('UPSTREAM_TIMEOUT', 'the IBKR gateway did not answer in time');
    case 'unreachable':
      return new ApiError('BROKER_UNAVAILABLE', 'the IBKR gateway is not running or not reachable: start the Client Portal Gateway', {
        retryAfterSeconds: 5,
        cause: error,
      });
    case 'reset':
      return new ApiError('BROKER_UNAVAILABLE', 'the IBKR gateway closed the connection', { retryAfterSeconds: 5, cause: error });
    case 'too_large':
      return new ApiError('UPSTREAM_ERROR', 'the IBKR gateway sent a body larger than allowed');
    case 'proxy':
    case 'certificate':
      return new ApiError('BROKER_UNAVAILABLE', error.message, { retryAfterSeconds: 5, cause: error, publicMessage: error.publicMessage });
  }
}

/** `a=1; Path=/; Secure` and `b=2; HttpOnly` as the request header `a=1; b=2`. */
function cookiePairs(setCookie: string | string[]): string {
  return (Array.isArray(setCookie) ? setCookie : [setCookie]).map((line) => (line.split(';')[0] as string).trim()).join('; ');
}
