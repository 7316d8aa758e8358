// Who may read broker data (accounts, positions, quotes and their stream topics). The spec calls the broker
// path a local proxy whose callers send no credentials, so "local" is enforced here rather than assumed:
//  - a browser page may read it only from an allowed web origin (BROKER_CORS_ORIGINS, or the service's own),
//    and only through a Host that names this service (a rebound name would make any site same-origin);
//  - a caller is admitted by its network (BROKER_ALLOW_FROM), judged on the address TRUST_PROXY lets the
//    service believe; a request a proxy forwarded is judged only when TRUST_PROXY names that proxy;
//  - or by BROKER_TOKEN as a bearer token, or a one-time stream ticket (EventSource sends no headers), from anywhere.
// Pure over the request's facts, so each refusal path is tested without a socket.
import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken, sameSecret } from '../core/bearer.js';
import type { ClientKey } from '../core/caller.js';
import type { Config } from '../core/config.js';
import { ApiError } from '../core/errors.js';
import { type AddressMatcher, isLoopbackHost, namesProxies, networkMatcher, proxyTrust } from '../core/networks.js';
import { echoed } from '../core/parameter-text.js';
import { WebOrigins } from '../core/web-origins.js';

export interface CallerFacts {
  /** The address the service believes (Fastify's `request.ip` under TRUST_PROXY). */
  ip: string | undefined;
  /** The socket's peer: the caller itself, or the proxy that forwarded it. */
  peer: string | undefined;
  headers: IncomingHttpHeaders;
  /** How the service was reached (`http` or `https`), for its own origin. */
  scheme: string;
  /** The client key the request was sent with (CLIENT_KEYS), if any: its bearer token was that key. */
  key?: ClientKey | undefined;
}

export type Admission = 'network' | 'token' | 'ticket';

/** The headers a proxy tells a caller's address in; any of them means the peer is not the caller. */
const FORWARDING = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

export class BrokerAccess {
  readonly origins: WebOrigins;
  private readonly allowed: AddressMatcher;
  private readonly trusted: (address: string, hop: number) => boolean;

  constructor(
    private readonly access: Config['broker']['access'],
    private readonly trustProxy: Config['trustProxy'],
  ) {
    this.origins = new WebOrigins(access.corsOrigins);
    this.allowed = networkMatcher(access.allowFrom);
    this.trusted = proxyTrust(trustProxy);
  }

  get tokenSet(): boolean {
    return this.access.token !== undefined;
  }

  /** Whether a page at `origin` may be granted CORS on broker routes (the hook has already refused the rest). */
  allowsOrigin(origin: string): boolean {
    return this.origins.allows(origin);
  }

  /**
   * What a browser may do, judged before a preflight is answered and before any broker call: a page of a
   * foreign origin or site, or a request through a name that is not this service's, is refused.
   */
  browserRefusal(facts: CallerFacts, admittedByToken: boolean): ApiError | undefined {
    const origin = header(facts.headers, 'origin');
    if (origin !== undefined) {
      if (!this.origins.allows(origin) && !this.origins.isOwnOrigin(origin, header(facts.headers, 'host'), facts.scheme)) {
        return forbidden(
          `web pages of ${echoed(origin)} may not read broker data: add that origin to BROKER_CORS_ORIGINS if it is your own dashboard`,
        );
      }
    } else if (header(facts.headers, 'sec-fetch-site') === 'cross-site') {
      return forbidden(
        'a page of another site may not read broker data: add its origin to BROKER_CORS_ORIGINS if it is your own dashboard',
      );
    }
    // A bearer token is not something a rebound page holds.
    if (!admittedByToken && !this.origins.isOwnHost(header(facts.headers, 'host'))) {
      return forbidden(
        'broker data is served only through an address, localhost, or a host named in BROKER_CORS_ORIGINS (this Host header is none of these)',
      );
    }
    return undefined;
  }

  /**
   * The token, when one was sent: 'token' for BROKER_TOKEN, an error for a wrong one, undefined when none was
   * sent (or none is configured: the network decides).
   */
  tokenAdmission(facts: CallerFacts): Admission | ApiError | undefined {
    // A client key with the broker scope admits as BROKER_TOKEN does; one without it is no wrong BROKER_TOKEN.
    if (facts.key !== undefined) return facts.key.scopes.has('broker') ? 'token' : undefined;
    const wanted = this.access.token;
    const authorization = header(facts.headers, 'authorization');
    if (wanted === undefined || authorization === undefined) return undefined;
    const given = bearerToken(authorization);
    if (given !== undefined && sameSecret(given, wanted)) return 'token';
    return new ApiError('BROKER_FORBIDDEN', 'the Authorization header is not Bearer <BROKER_TOKEN>', {
      unauthenticated: true,
      headers: { 'www-authenticate': 'Bearer realm="broker", error="invalid_token"' },
    });
  }

  /**
   * A caller without a token: admitted by the network the service believes it is in, or refused saying what to
   * configure. The caller hears it in words; the networks allowed and the proxy's address are for the log
   * (the full message, which the edge logs).
   */
  networkRefusal(facts: CallerFacts): ApiError | undefined {
    const forwarded = FORWARDING.filter((name) => facts.headers[name] !== undefined).join(', ');
    if (forwarded !== '') {
      if (!namesProxies(this.trustProxy) || facts.peer === undefined || !this.trusted(facts.peer, 0)) {
        const said = (peer: string) =>
          `this request was forwarded (${forwarded}) by ${peer}, which TRUST_PROXY does not name, so its caller is unknown: set TRUST_PROXY to the proxy's address${this.orToken()}`;
        return forbidden(said(facts.peer ?? 'an unknown peer'), said('a proxy'));
      }
      if (facts.headers['x-forwarded-for'] === undefined) {
        const said = (proxy: string) =>
          `${proxy} sends ${forwarded} but no X-Forwarded-For, the one header the service reads the caller's address from: make it send X-Forwarded-For`;
        return forbidden(said(`the proxy at ${facts.peer}`), said('the proxy in front'));
      }
    }
    if (this.allowed(facts.ip)) return undefined;
    const said = (networks: string) =>
      `broker data is readable from ${networks}, and this caller's address ${facts.ip ?? 'is unknown'}${facts.ip === undefined ? '' : ' is not among them'}${this.orToken()}`;
    return forbidden(
      said(`${this.access.allowFrom.join(', ') || 'no network'} (BROKER_ALLOW_FROM)`),
      said('the networks BROKER_ALLOW_FROM names'),
    );
  }

  /**
   * Whether the broker rules admit this caller as they stand, without a stream ticket (those admit one stream
   * only): it may then see the service's private side (status's local view, errors' full words). The one answer
   * to "is this caller local".
   */
  isLocal(facts: CallerFacts): boolean {
    const token = this.tokenAdmission(facts);
    if (token instanceof Error || this.browserRefusal(facts, token === 'token') !== undefined) return false;
    return token === 'token' || this.networkRefusal(facts) === undefined;
  }

  private orToken(): string {
    return this.access.token === undefined
      ? '; to read broker data from elsewhere, set BROKER_TOKEN and send it as a bearer token'
      : '; or send Authorization: Bearer <BROKER_TOKEN>';
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function forbidden(message: string, publicMessage?: string): ApiError {
  return new ApiError('BROKER_FORBIDDEN', message, { publicMessage });
}

/**
 * The one start-up warning when broker data can be read beyond this machine: listening on a non-loopback
 * address with a broker configured. It names who may read it, so that an operator sees the exposure.
 */
export function brokerExposure(config: Config): string | undefined {
  if (config.broker.kind === 'none' || isLoopbackHost(config.host)) return undefined;
  const { allowFrom, token } = config.broker.access;
  const networks =
    allowFrom.length === 0 || allowFrom.every((entry) => entry.toLowerCase() === 'none') ? 'no network' : allowFrom.join(', ');
  return (
    `listening on ${config.host}: broker accounts, positions and quotes (${config.broker.kind}) are readable by callers from ${networks} (BROKER_ALLOW_FROM)` +
    `${token === undefined ? '; BROKER_TOKEN is not set, so no caller from elsewhere' : ', and from anywhere with BROKER_TOKEN'}` +
    `${namesProxies(config.trustProxy) ? `; callers behind ${config.trustProxy} (TRUST_PROXY) are judged by X-Forwarded-For` : ''}`
  );
}
