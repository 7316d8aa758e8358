// OAuth2 access tokens for Tastytrade: refreshed ahead of their 15-minute expiry, one refresh in flight at
// a time, and a refused refresh token remembered for a while, because repeated failed logins get the
// address blocked for hours.
import { ApiError } from '../../core/errors.js';
import type { HttpClient, UpstreamResponse } from '../http-client.js';
import { transportError } from './transport-error.js';
import { errorLabel, parseError } from './parse-envelope.js';
import { parseToken } from './parse-token.js';

export interface TokenManagerOptions {
  url: string;
  clientSecret: string;
  refreshToken: string;
  http: HttpClient;
  userAgent: string;
  now?: () => number;
  /** Refresh this long before expiry (capped at a quarter of the lifetime). */
  refreshMarginMs?: number;
  /** After the refresh token was refused, answer from memory for this long. */
  refusedCooldownMs?: number;
}

/** Tastytrade refused our refresh token or client secret: a person has to issue new ones. */
export class TokenRefusedError extends ApiError {
  constructor(code: string | null) {
    super(
      'BROKER_UNAVAILABLE',
      `Tastytrade refused the configured refresh token${code === null ? '' : ` (${code})`}: create a new one and set TASTYTRADE_REFRESH_TOKEN and TASTYTRADE_CLIENT_SECRET`,
      { retryAfterSeconds: 300 },
    );
    this.name = 'TokenRefusedError';
  }
}

interface Held {
  value: string;
  refreshAt: number;
  expiresAt: number;
}

export class TokenManager {
  private held: Held | undefined;
  private refreshing: Promise<string> | undefined;
  private refused: { at: number; error: TokenRefusedError } | undefined;
  private readonly now: () => number;
  /** Refreshes sent, for status and tests. */
  refreshes = 0;

  constructor(private readonly options: TokenManagerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A token valid for a while yet: the held one, or a fresh one. */
  async accessToken(): Promise<string> {
    const held = this.held;
    if (held !== undefined && this.now() < held.refreshAt) return held.value;
    return this.refresh();
  }

  /**
   * The API refused `used` (401). Refresh once, unless another caller already replaced that token,
   * in which case the replacement is used without a second refresh.
   */
  async afterRejected(used: string): Promise<string> {
    const held = this.held;
    if (held !== undefined && held.value !== used && this.now() < held.expiresAt) return held.value;
    if (held?.value === used) this.held = undefined;
    return this.refresh();
  }

  private refresh(): Promise<string> {
    if (this.refreshing !== undefined) return this.refreshing;
    const refused = this.refused;
    if (refused !== undefined && this.now() - refused.at < (this.options.refusedCooldownMs ?? 300_000))
      return Promise.reject(refused.error);
    this.refreshing = this.requestToken().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async requestToken(): Promise<string> {
    const { url, clientSecret, refreshToken, http, userAgent } = this.options;
    this.refreshes += 1;
    const sentAt = this.now();
    let res: UpstreamResponse;
    try {
      res = await http.request(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'user-agent': userAgent },
        body: { grant_type: 'refresh_token', refresh_token: refreshToken, client_secret: clientSecret },
      });
    } catch (error) {
      throw transportError(error);
    }
    if (res.status === 200) {
      const token = parseToken(res.json);
      const margin = Math.min(this.options.refreshMarginMs ?? 60_000, token.lifetimeMs / 4);
      this.held = { value: token.value, refreshAt: sentAt + token.lifetimeMs - margin, expiresAt: sentAt + token.lifetimeMs };
      this.refused = undefined;
      return token.value;
    }
    if (res.status === 429)
      throw new ApiError('BROKER_UNAVAILABLE', 'Tastytrade is limiting token requests; retry shortly', { retryAfterSeconds: 30 });
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      const error = new TokenRefusedError(errorLabel(parseError(res.json)) || null);
      this.refused = { at: this.now(), error };
      this.held = undefined;
      throw error;
    }
    throw new ApiError('UPSTREAM_ERROR', `Tastytrade's token endpoint answered HTTP ${res.status}`);
  }
}
