// Web origins (RFC 6454: scheme, host and port) as BROKER_CORS_ORIGINS names them: `https://dash.example.com`,
// `http://localhost:5173`, or a port of `*` for any port of that scheme and host. Pure, so that the rule a
// browser request is judged by can be tested on every spelling a browser sends.
import { isIP } from 'node:net';

interface OriginPattern {
  scheme: string;
  host: string;
  /** The explicit port, '' for the scheme's default, '*' for any. */
  port: string;
}

/** Loopback pages on any port: a developer's own dashboard, never a site from the web. */
export const LOOPBACK_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'];

const ORIGIN = /^(https?):\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}|\*))?$/;
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

function parse(text: string): OriginPattern | undefined {
  const match = ORIGIN.exec(text.trim().toLowerCase().replace(/\/$/, ''));
  if (match === null) return undefined;
  const [, scheme = '', host = '', port = ''] = match;
  const number = port === '' || port === '*' ? port : String(Number(port));
  if (Number(number) > 65_535) return undefined;
  return { scheme, host, port: number === DEFAULT_PORT[scheme] ? '' : number };
}

/** The patterns of a comma list; throws a TypeError naming the first entry that is not an origin. */
export function parseOrigins(entries: readonly string[]): OriginPattern[] {
  return entries.map((entry) => {
    const pattern = parse(entry);
    if (pattern === undefined) throw new TypeError(`"${entry}" is not an origin (scheme://host[:port], port * for any)`);
    return pattern;
  });
}

export class WebOrigins {
  private readonly patterns: OriginPattern[];
  /** Host names (no port) the patterns name: a request's Host among them is one of ours. */
  private readonly hosts: Set<string>;

  constructor(entries: readonly string[]) {
    this.patterns = parseOrigins(entries);
    this.hosts = new Set(this.patterns.map((p) => p.host));
  }

  /** Whether a page at `origin` (an Origin header) is one of the listed. `null` (an opaque origin) never is. */
  allows(origin: string): boolean {
    const given = parse(origin);
    if (given === undefined) return false;
    return this.patterns.some((p) => p.scheme === given.scheme && p.host === given.host && (p.port === '*' || p.port === given.port));
  }

  /**
   * Whether a request's Host names this service rather than a name someone else controls: an address, a
   * `localhost` name (browsers resolve those to loopback themselves), or a host the listed origins name. A page
   * whose own name was rebound to the service's address (DNS rebinding) sends its own name here, and is
   * same-origin to itself, so no Origin check would see it.
   */
  isOwnHost(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return false;
    const host = hostName(hostHeader);
    if (host === undefined) return false;
    return isIP(host.replace(/^\[|\]$/g, '')) !== 0 || host === 'localhost' || host.endsWith('.localhost') || this.hosts.has(host);
  }

  /** Whether `origin` is the service's own origin, as the request's Host says it was reached. */
  isOwnOrigin(origin: string, hostHeader: string | undefined, scheme: string): boolean {
    const given = parse(origin);
    const own = hostHeader === undefined ? undefined : parse(`${scheme}://${hostHeader}`);
    return given !== undefined && own !== undefined && given.scheme === own.scheme && given.host === own.host && given.port === own.port;
  }
}

/** The host of a Host header without its port, lower-case; `[…]` kept around an IPv6 address. */
function hostName(header: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.exec(header.trim().toLowerCase());
  return match?.[1];
}
