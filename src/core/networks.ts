// Address matching for access rules (BROKER_ALLOW_FROM) and for which peers may forward a caller's address
// (TRUST_PROXY). Both go through @fastify/proxy-addr, the matcher Fastify itself uses for `request.ip`, so
// that a rule and the address it judges read IPv4, IPv6, IPv4-mapped IPv6 and CIDRs the same way.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';

/** Words BROKER_ALLOW_FROM takes besides addresses and CIDRs. */
const NETWORK_WORDS: Readonly<Record<string, readonly string[]>> = {
  /** 127.0.0.0/8 and ::1. */
  loopback: ['loopback'],
  /** 10/8, 172.16/12, 192.168/16 and fc00::/7 (RFC 1918 and RFC 4193). */
  private: ['uniquelocal'],
  none: [],
};

export type AddressMatcher = (address: string | undefined) => boolean;

/**
 * A comma list of `loopback`, `private`, `none`, addresses and CIDRs as one matcher. Throws a TypeError naming
 * the first entry that is none of these.
 */
export function networkMatcher(entries: readonly string[]): AddressMatcher {
  const ranges = entries.flatMap((entry) => NETWORK_WORDS[entry.toLowerCase()] ?? [checkedRange(entry)]);
  if (ranges.length === 0) return () => false;
  const trust = proxyAddr.compile(ranges);
  // Strictly an address (proxy-addr alone would read `1.2.3` from a forwarded header as 1.2.0.3).
  return (address) => address !== undefined && isIP(address) !== 0 && trust(address, 0);
}

/**
 * An address or CIDR in the strict spelling node:net reads (proxy-addr alone also takes `10.0.0` as 10.0.0.0,
 * where a person meant a range). A /0 is refused: it is every caller, which is what BROKER_TOKEN is for.
 */
function checkedRange(entry: string): string {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  const width = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? width : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (family === 0 || extra !== undefined || !(prefix >= 1 && prefix <= width)) {
    throw new TypeError(`"${entry}" is not an address, a CIDR (/1 to /${family === 6 ? 128 : 32}), loopback, private or none`);
  }
  return entry;
}

/**
 * Fastify's `trustProxy` as the function it is given: whether the peer at `hop` (0 = the socket's) may tell
 * the caller's address. A hop count trusts whoever is nearest, without knowing who that is.
 */
export function proxyTrust(value: boolean | number | string): (address: string, hop: number) => boolean {
  if (value === false) return () => false;
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return remembered(proxyAddr.compile(value.split(',').map((entry) => entry.trim())));
}

/** How many addresses a named-proxy trust remembers before it starts afresh (callers behind a proxy send any they like). */
const REMEMBERED_ADDRESSES = 1_024;

/**
 * A compiled address list's answers, remembered by address: it parses the address on every call (1 to 2 µs per
 * request with X-Forwarded-For), where the peers it judges are a few proxies. Its answer does not depend on the hop.
 */
function remembered(trust: (address: string, hop: number) => boolean): (address: string, hop: number) => boolean {
  const known = new Map<string, boolean>();
  return (address) => {
    let trusted = known.get(address);
    if (trusted === undefined) {
      if (known.size >= REMEMBERED_ADDRESSES) known.clear();
      trusted = trust(address, 0);
      known.set(address, trusted);
    }
    return trusted;
  };
}

/**
 * The caller's address as Fastify reads `request.ip` (fastify/lib/request.js: the last of proxy-addr's
 * addresses under the same trust function), for answers given before Fastify has a request: the hot path's
 * rate-limit key and log line are then the pipeline's. Undefined trust: the socket's peer, as Fastify's default.
 */
export function callerAddress(
  trust: ((address: string, hop: number) => boolean) | undefined,
): (req: IncomingMessage) => string | undefined {
  if (trust === undefined) return (req) => req.socket.remoteAddress;
  return (req) => proxyAddr(req, trust);
}

/** Whether TRUST_PROXY names proxies by address (rather than trusting all, or a hop count): only then is a forwarding peer known. */
export function namesProxies(value: boolean | number | string): value is string {
  return typeof value === 'string';
}

/** Whether a listen address (HOST) keeps the service to this machine: only local processes can then reach it. */
export function isLoopbackHost(host: string): boolean {
  const address = host.toLowerCase().replace(/^::ffff:/, '');
  return address === 'localhost' || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));
}

/**
 * What TRUST_PROXY lets callers do when it believes a peer it does not name: choose the address the service
 * judges them by. Undefined when it names its proxies (proxy-addr refuses a /0), or believes none. Broker
 * access is not at stake: it believes X-Forwarded-For only from a proxy named by address (broker-access.ts).
 *  - `true` believes the farthest X-Forwarded-For entry, which the caller writes itself, even through a proxy
 *    that appends to the header.
 *  - A hop count believes what its nearest peers added: behind that many proxies that append, the caller's
 *    real address. But a caller that reaches the service without passing them writes the header itself, and
 *    off loopback nothing but the network stops one, so there a hop count is the same risk.
 */
export function trustProxyRisk(value: boolean | number | string, host: string): string | undefined {
  let believed: string;
  if (value === true) believed = "TRUST_PROXY=true believes any peer's X-Forwarded-For, whose first address the caller writes itself";
  else if (typeof value === 'number' && value > 0 && !isLoopbackHost(host))
    believed = `TRUST_PROXY=${value} (a hop count) believes whoever is nearest, and listening on ${host} a caller that reaches the service directly writes its own X-Forwarded-For`;
  else return undefined;
  return `${believed}: any caller can choose its own address for the per-caller limit and the stream caps; set TRUST_PROXY to the proxy's address`;
}
