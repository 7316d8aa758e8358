// Which upstream targets go through the outbound proxy, and how: undici's ProxyAgent for HTTP calls
// (http-client.ts) and an HttpsProxyAgent for the broker websockets (`ws` takes a Node http.Agent), both
// tunnelling with CONNECT, to http:// and ws:// targets too: a plain request in absolute form cannot carry a
// websocket upgrade through most proxies, and one way for both keeps what the proxy sees the same.
//
// The rule, per target: the proxy of its scheme (https:/wss: HTTPS_PROXY, else HTTP_PROXY; http:/ws:
// HTTP_PROXY); none for a loopback host or the IBKR gateway's host unless PROXY_ALSO_FOR names it (a local
// gateway must stay local, and a corporate proxy cannot reach it anyway); none for a host NO_PROXY names.
//
// The table is the process's, as the environment it is read from is: the composition root installs it
// (useOutboundRoutes) and every client asks it, so that a feed's socket needs no more than
// `agent: proxyAgentFor(url)`. Why not EnvHttpProxyAgent: its NO_PROXY takes no address ranges, it knows no
// local exemption, and a failure could not say which proxy refused.
import type { Agent as HttpAgent, ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { AgentConnectOpts } from 'agent-base';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { type HostRules, hostRules } from '../core/host-rules.js';
import type { ProxyEndpoint, ProxySettings } from '../core/proxy-settings.js';

/** Always direct, whatever NO_PROXY says: loopback names and addresses (RFC 6761 `localhost`, 127/8, ::1). */
const LOOPBACK = hostRules(['localhost', '127.0.0.0/8', '::1/128', '::ffff:127.0.0.0/104', '0.0.0.0', '::']);

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'ws:': 80, 'https:': 443, 'wss:': 443 };

export class OutboundRoutes {
  static readonly DIRECT = new OutboundRoutes({ https: undefined, http: undefined, noProxy: [], alsoFor: [] });

  /** No proxy is set: every target is direct, and clients skip asking. */
  readonly direct: boolean;
  private readonly noProxy: HostRules;
  private readonly alsoFor: HostRules;
  private readonly local: HostRules;
  /** The answer per origin: a client asks on every call. */
  private readonly byOrigin = new Map<string, ProxyEndpoint | null>();

  /** `localHosts`: hosts kept direct like loopback (the IBKR gateway's). */
  constructor(
    readonly settings: ProxySettings,
    localHosts: readonly string[] = [],
  ) {
    this.direct = settings.https === undefined && settings.http === undefined;
    this.noProxy = hostRules(settings.noProxy);
    this.alsoFor = hostRules(settings.alsoFor);
    this.local = hostRules(localHosts);
  }

  /** The proxy a call to `target` goes through, or undefined when it goes directly. */
  proxyFor(target: URL | string): ProxyEndpoint | undefined {
    if (this.direct) return undefined;
    const url = typeof target === 'string' ? new URL(target) : target;
    let known = this.byOrigin.get(url.origin);
    if (known === undefined) {
      known = this.decide(url) ?? null;
      if (this.byOrigin.size < 1_000) this.byOrigin.set(url.origin, known);
    }
    return known ?? undefined;
  }

  private decide(url: URL): ProxyEndpoint | undefined {
    const secure = url.protocol === 'https:' || url.protocol === 'wss:';
    const proxy = secure ? this.settings.https : url.protocol === 'http:' || url.protocol === 'ws:' ? this.settings.http : undefined;
    if (proxy === undefined) return undefined;
    const host = url.hostname;
    const port = url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);
    const kept = LOOPBACK.matches(host, port) || this.local.matches(host, port);
    if (kept && !this.alsoFor.matches(host, port)) return undefined;
    return this.noProxy.matches(host, port) ? undefined : proxy;
  }
}

let routes = OutboundRoutes.DIRECT;
const tunnelAgents = new Map<string, TunnelAgent>();

/** Installs the process's table (the composition root, once the configuration is read). */
export function useOutboundRoutes(next: OutboundRoutes): void {
  routes = next;
  for (const agent of tunnelAgents.values()) agent.destroy();
  tunnelAgents.clear();
}

export function outboundRoutes(): OutboundRoutes {
  return routes;
}

/** The agent a websocket to `url` opens its connection with: a CONNECT tunnel through the proxy, or undefined (direct). */
export function proxyAgentFor(url: URL | string): HttpAgent | undefined {
  const proxy = routes.proxyFor(url);
  if (proxy === undefined) return undefined;
  let agent = tunnelAgents.get(proxy.url);
  if (agent === undefined) {
    agent = new TunnelAgent(proxy);
    tunnelAgents.set(proxy.url, agent);
  }
  return agent;
}

/** The proxy refused a tunnel or could not be reached; the message names it by host and port only. */
export class ProxyTunnelError extends Error {
  constructor(
    readonly proxy: ProxyEndpoint,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
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

  override async connect(req: ClientRequest, opts: AgentConnectOpts): Promise<Socket> {
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
