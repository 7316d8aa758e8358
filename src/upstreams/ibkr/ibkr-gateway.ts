// The Client Portal Gateway on the wire: every call paced (with a margin under the gateway's 10 a second),
// every answer classified, a 429 turned into a back-off, and a lost session given exactly one recovery
// attempt, shared by every caller that notices it, before the caller hears "not authenticated".
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiError, UnreadableAnswerError, UpstreamTransportError } from '../../core/errors.js';
import { type Pacer, RequestPacer, type RequestPacerOptions } from '../../broker/request-pacer.js';
import type { HttpClient, UpstreamResponse } from '../http-client.js';
import { classifyGatewayAnswer, type GatewayAnswer } from './classify-response.js';
import { parseAuthStatus } from './parse-session.js';

/** Why a session needs recovering: no brokerage session was ever started, or it was lost. */
export type SessionProblem = 'no_session' | 'not_authenticated';

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
  /** Runs before each attempt (e.g. the /iserver/accounts call snapshots need once per session). */
  prepare?: () => Promise<void>;
  /** The request carries a caller's input (a symbol): a 4xx answer refuses that input, it says nothing of the gateway's health. */
  callerInput?: boolean;
}

/** The gateway's own limits: 10 requests in any second (a penalty box for violators), /portfolio/accounts once per 5 s. */
export const IBKR_GATEWAY_PER_SECOND = 10;
export const DEFAULT_IBKR_REQUESTS_PER_SECOND = 8;

/**
 * Our pacing, with a margin under the gateway's: `perSecond` (default 8) in any second, spread evenly
 * (125 ms apart at 8). Eleven arrivals within one second would then need departures squeezed by more
 * than 250 ms of jitter (network plus event-loop delay), which is far beyond a gateway on the same host.
 */
export function ibkrPacerOptions(perSecond = DEFAULT_IBKR_REQUESTS_PER_SECOND): RequestPacerOptions {
  return {
    name: 'the IBKR gateway',
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

export class IbkrGateway {
  readonly origin: string;
  readonly pacer: Pacer;
  /** Increases with every recovered session: per-session preparations compare against it. */
  epoch = 0;
  private recovering: Promise<boolean> | undefined;
  private recoveryFailedAt = 0;

  constructor(private readonly options: IbkrGatewayOptions) {
    this.origin = new URL(options.url).origin;
    this.pacer = options.pacer ?? new RequestPacer(ibkrPacerOptions());
  }

  /** One paced call, classified. Throws for transport failures and 429 (after backing off). */
  async send(path: string, options: CallOptions = {}): Promise<GatewayAnswer> {
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
    const answer = classifyGatewayAnswer(res.status, res.headers, res.json);
    if (answer.kind === 'rate_limited') {
      const waitMs = this.pacer.refused(answer.retryAfterSeconds);
      this.options.logger.warn({ upstream: 'ibkr', path, backOffMs: waitMs }, 'IBKR gateway answered 429; backing off');
      throw this.pacer.unavailable('the IBKR gateway is pacing our requests (429)', waitMs);
    }
    this.pacer.succeeded();
    return answer;
  }

  /** A call whose answer must be data: a lost session gets one recovery and one retry. */
  async call<T>(path: string, parse: (json: unknown) => T, options: CallOptions = {}): Promise<T> {
    await options.prepare?.();
    let answer = await this.send(path, options);
    if (answer.kind === 'logged_out' || answer.kind === 'no_session') {
      const recovered = await this.recover(answer.kind === 'no_session' ? 'no_session' : 'not_authenticated');
      if (!recovered) throw notAuthenticated(answer.kind);
      await options.prepare?.();
      answer = await this.send(path, options);
    }
    if (answer.kind === 'ok') return parse(answer.json);
    if (answer.kind === 'logged_out' || answer.kind === 'no_session') throw notAuthenticated(answer.kind);
    if (answer.kind === 'error' && answer.drift !== undefined) throw new UnreadableAnswerError(answer.drift, answer.message);
    if (answer.kind === 'error' && options.callerInput && answer.status >= 400 && answer.status < 500) {
      throw new ApiError('SYMBOL_NOT_FOUND', `the IBKR gateway refused the symbol (HTTP ${answer.status})`);
    }
    throw new ApiError('UPSTREAM_ERROR', answer.kind === 'error' ? answer.message : 'the IBKR gateway answered unexpectedly');
  }

  /**
   * One attempt to get an authenticated brokerage session back, shared by concurrent callers: start
   * one (ssodh/init) or ask for re-authentication, then read the auth status. False when the gateway
   * itself is logged out (a person must log in) or the session did not come back.
   */
  recover(problem: SessionProblem): Promise<boolean> {
    if (this.recovering !== undefined) return this.recovering;
    if (Date.now() - this.recoveryFailedAt < (this.options.recoveryCooldownMs ?? 10_000)) return Promise.resolve(false);
    this.recovering = this.attemptRecovery(problem)
      .then((ok) => {
        if (ok) this.epoch += 1;
        else this.recoveryFailedAt = Date.now();
        this.options.logger.info({ upstream: 'ibkr', problem, recovered: ok }, 'IBKR session recovery attempt');
        return ok;
      })
      .catch((error: unknown) => {
        this.recoveryFailedAt = Date.now();
        throw error;
      })
      .finally(() => {
        this.recovering = undefined;
      });
    return this.recovering;
  }

  private async attemptRecovery(problem: SessionProblem): Promise<boolean> {
    const start =
      problem === 'no_session'
        ? await this.send('/iserver/auth/ssodh/init', { method: 'POST', body: { publish: true, compete: true } })
        : await this.send('/iserver/reauthenticate', { method: 'POST', body: {} });
    if (start.kind === 'logged_out') return false;
    const polls = this.options.recoveryPolls ?? 4;
    for (let i = 0; i < polls; i += 1) {
      const status = await this.send('/iserver/auth/status');
      if (status.kind === 'logged_out') return false;
      if (status.kind === 'ok' && parseAuthStatus(status.json).authenticated) return true;
      if (i < polls - 1) await sleep(this.options.recoveryPollMs ?? 250);
    }
    return false;
  }
}

export function notAuthenticated(kind: 'logged_out' | 'no_session'): ApiError {
  return new ApiError(
    'BROKER_UNAVAILABLE',
    kind === 'logged_out'
      ? 'the IBKR gateway is not logged in: log in to the Client Portal Gateway in a browser'
      : 'the IBKR gateway has no brokerage session and could not start one: log in to the Client Portal Gateway again',
    { retryAfterSeconds: 30 },
  );
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/;

/** Connection refused answers at once: the caller learns "gateway down" without waiting for a timeout. */
export function gatewayTransportError(error: unknown): ApiError {
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
  }
}
