// How upstream targets go through the outbound proxy (which ones: core/outbound-routes.ts): undici's
// ProxyAgent for HTTP calls (http-client.ts) and an HttpsProxyAgent for the broker websockets (`ws` takes a
// Node http.Agent; https-proxy-agent is the one its documentation shows), both tunnelling with CONNECT, to
// http:// and ws:// targets too: a plain request in absolute form cannot carry a websocket upgrade through
// most proxies, and one way for both keeps what the proxy sees the same.
//
// One OutboundProxy is built by the composition root and given to every HTTP client, broker and feed socket.
// Why not EnvHttpProxyAgent: its NO_PROXY takes no address ranges, it knows no local exemption, and a
// failure could not say which proxy refused.
import type { Agent as HttpAgent, ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { OutboundRoutes } from '../core/outbound-routes.js';
import type { ProxyEndpoint } from '../core/proxy-settings.js';

/** The routes to every upstream, and the websockets' tunnel agents (one per proxy). */
export class OutboundProxy {
  /** No proxy: every target direct (clients built without one, as in tests). */
  static readonly DIRECT = new OutboundProxy(OutboundRoutes.DIRECT);
  private readonly tunnelAgents = new Map<string, TunnelAgent>();

  constructor(readonly routes: OutboundRoutes) {}

  /** The proxy a call to `target` goes through, or undefined when it goes directly. */
  proxyFor(target: URL | string): ProxyEndpoint | undefined {
    return this.routes.direct ? undefined : this.routes.proxyFor(target);
  }

  /** The agent a websocket to `url` opens its connection with: a CONNECT tunnel through the proxy, or undefined (direct). */
  agentFor(url: URL | string): HttpAgent | undefined {
    const proxy = this.proxyFor(url);
    if (proxy === undefined) return undefined;
    let agent = this.tunnelAgents.get(proxy.url);
    if (agent === undefined) {
      agent = new TunnelAgent(proxy);
      this.tunnelAgents.set(proxy.url, agent);
    }
    return agent;
  }

  close(): void {
    for (const agent of this.tunnelAgents.values()) agent.destroy();
    this.tunnelAgents.clear();
  }
}

/** The proxy refused a tunnel or could not be reached; the message names it by host and port only. */
class ProxyTunnelError extends Error {
  constructor(proxy: ProxyEndpoint, reason: string, options?: ErrorOptions) {
    super(`the outbound proxy ${proxy.address} (${proxy.variable}) ${reason}`, options);
    this.name = 'ProxyTunnelError';
  }
}

/** Why a CONNECT answered `status` failed, in words that say what to change. */
export function refusal(proxy: ProxyEndpoint, status: number): string {
  if (status === 407)
    return proxy.credentials
      ? `refused the user name and password in ${proxy.variable} (HTTP 407)`
      : `asks for credentials (HTTP 407): give them in ${proxy.variable} as http://user:password@${proxy.address}`;
  if (status === 403) return 'refused the connection (HTTP 403): its rules do not allow this destination';
  if (status >= 500) return `could not connect to the destination (HTTP ${status})`;
  return `refused the connection (HTTP ${status})`;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Why connecting to the proxy itself failed (a code of node:net or undici), or undefined when it is not that. */
export function unreachable(proxy: ProxyEndpoint, code: string | undefined): string | undefined {
  if (code === undefined || !UNREACHABLE.has(code)) return undefined;
  const what = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'its host name does not resolve' : 'nothing answers there';
  return `is unreachable (${code}: ${what}): check ${proxy.variable}`;
}

/** Node's and OpenSSL's codes for a certificate that was not trusted or not valid for the host. */
const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/** One line naming a refused certificate's problem and the setting for a TLS-inspecting proxy's CA; undefined for other codes. */
export function certificateRefused(what: string, code: string | undefined, problem: string | undefined): string | undefined {
  if (code === undefined || !CERTIFICATE_CODES.test(code)) return undefined;
  return `${what}: its TLS certificate was refused (${code}: ${problem ?? 'not trusted'}); if a proxy inspects TLS, give its CA certificate in NODE_EXTRA_CA_CERTS`;
}

/** Why a broker websocket failed, in one line: the proxy that refused it, the certificate refused, or the socket's code. */
export function socketProblem(what: string, error: Error & { code?: string }): string {
  if (error instanceof ProxyTunnelError) return `${what} was not opened: ${error.message}`;
  return certificateRefused(what, error.code, error.message) ?? `${what} failed (${error.code ?? 'error'})`;
}

/**
 * HttpsProxyAgent hands a refused CONNECT to the request as if the destination had answered (`ws` would
 * report "the server refused the upgrade (HTTP 407)"); here it is an error that names the proxy.
 */
class TunnelAgent extends HttpsProxyAgent<string> {
  constructor(private readonly endpoint: ProxyEndpoint) {
    super(endpoint.url);
  }

  override async connect(req: ClientRequest, opts: Parameters<HttpsProxyAgent<string>['connect']>[1]): Promise<Socket> {
    let status = 200;
    req.once('proxyConnect', (answer: { statusCode: number }) => {
      status = answer.statusCode;
    });
    let socket: Socket;
    try {
      socket = await super.connect(req, opts);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new ProxyTunnelError(this.endpoint, unreachable(this.endpoint, code) ?? `failed to open a tunnel (${code ?? 'error'})`, {
        cause: error,
      });
    }
    if (status !== 200) {
      socket.destroy();
      throw new ProxyTunnelError(this.endpoint, refusal(this.endpoint, status));
    }
    return socket;
  }
}
