// Which upstream targets go through the outbound proxy. Per target: the proxy of its scheme (https: and
// wss: HTTPS_PROXY, else HTTP_PROXY; http: and ws: HTTP_PROXY); none for a loopback host or the IBKR
// gateway's host unless PROXY_ALSO_FOR names it (a local gateway must stay local, and a corporate proxy
// cannot reach it anyway); none for a host NO_PROXY names (which wins over PROXY_ALSO_FOR).
import { type HostRules, hostRules } from './host-rules.js';
import type { ProxyEndpoint, ProxySettings } from './proxy-settings.js';

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

/** The hosts kept direct besides loopback: the IBKR gateway's, when it is the broker. */
export function gatewayHosts(broker: string, ibkrUrl: string): string[] {
  if (broker !== 'ibkr') return [];
  try {
    return [new URL(ibkrUrl).hostname];
  } catch {
    return [];
  }
}
