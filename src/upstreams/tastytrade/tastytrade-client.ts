// The Tastytrade Open API on the wire: a User-Agent on every call (or 401), a bearer token from the token
// manager, one refresh and one retry after a 401, and a back-off with jitter after a 429 (which comes
// without headers).
import type { Logger } from 'pino';
import { ApiError, UnreadableAnswerError } from '../../core/errors.js';
import { RequestPacer } from '../../broker/request-pacer.js';
import type { HttpClient } from '../http-client.js';
import { errorLabel, parseError } from './parse-envelope.js';
import { TokenManager } from './token-manager.js';
import { transportError } from './transport-error.js';

export const USER_AGENT = 'market-data-proxy/1.0.0';

export interface TastytradeClientOptions {
  url: string;
  clientSecret: string;
  refreshToken: string;
  http: HttpClient;
  logger: Logger;
  now?: () => number;
  refreshMarginMs?: number;
  pacer?: RequestPacer;
}

export class TastytradeClient {
  readonly tokens: TokenManager;
  readonly pacer: RequestPacer;

  constructor(private readonly options: TastytradeClientOptions) {
    const { url, clientSecret, refreshToken, http, now, refreshMarginMs } = options;
    this.tokens = new TokenManager({ url, clientSecret, refreshToken, http, userAgent: USER_AGENT, now, refreshMarginMs });
    // No published limit: a generous local cap, mostly so a 429 stops every caller at once.
    this.pacer =
      options.pacer ??
      new RequestPacer({
        name: 'Tastytrade',
        perWindow: 20,
        windowMs: 1_000,
        maxWaitMs: 5_000,
        baseBackOffMs: 2_000,
        maxBackOffMs: 300_000,
      });
  }

  async get<T>(path: string, parse: (json: unknown) => T, query?: string): Promise<T> {
    const target = `${this.options.url}${path}${query ? `?${query}` : ''}`;
    const token = await this.tokens.accessToken();
    let res = await this.send(target, token);
    if (res.status === 401) {
      // Expired early, revoked, or the clock drifted: one refresh, one retry.
      res = await this.send(target, await this.tokens.afterRejected(token));
      if (res.status === 401)
        throw new ApiError('BROKER_UNAVAILABLE', 'Tastytrade refused a freshly issued access token', { retryAfterSeconds: 60 });
    }
    if (res.status === 429) {
      const waitMs = this.pacer.refused();
      this.options.logger.warn({ upstream: 'tastytrade', path, backOffMs: waitMs }, 'Tastytrade answered 429; backing off');
      throw this.pacer.unavailable('Tastytrade is limiting our requests (429)', waitMs);
    }
    this.pacer.succeeded();
    if (res.status >= 200 && res.status < 300) {
      if (res.json === undefined) throw new UnreadableAnswerError('not-json', 'Tastytrade sent a body that is not JSON');
      return parse(res.json);
    }
    const label = errorLabel(parseError(res.json));
    const code = label === '' ? '' : ` (${label})`;
    if (res.status === 403) throw new ApiError('UPSTREAM_ERROR', `Tastytrade does not permit this request for the account${code}`);
    throw new ApiError('UPSTREAM_ERROR', `Tastytrade answered HTTP ${res.status}${code}`);
  }

  private async send(target: string, token: string) {
    await this.pacer.acquire();
    try {
      return await this.options.http.request(target, { headers: { authorization: `Bearer ${token}`, 'user-agent': USER_AGENT } });
    } catch (error) {
      throw transportError(error);
    }
  }
}
