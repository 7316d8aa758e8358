// A NO_PROXY-style list of hosts, as one matcher of request targets. The variable has no standard; this
// reads it as undici's EnvHttpProxyAgent, curl and Go's httpproxy agree on, plus the CIDRs curl (7.86)
// and Go take and undici does not:
//   `*`                         every host
//   `example.com`, `.example.com`, `*.example.com`
//                               that name and every name under it
//   `example.com:8443`          the same, on that port only
//   `10.1.2.3`, `[::1]:8080`    that address (on that port)
//   `10.0.0.0/8`, `fd00::/8`    every address in the range
// Entries are separated by commas or white space and compared without regard to case. An address range
// matches a target written as an address; a name is never resolved to see whether it falls in one (the
// proxy resolves names, not this service), as in curl and Go. Ranges are node:net's BlockList.
import { BlockList, isIP } from 'node:net';

export interface HostRules {
  /** Whether a target host (a name, or an address, IPv6 with or without brackets) on `port` is listed. */
  matches(host: string, port: number): boolean;
  /** Nothing listed. */
  readonly empty: boolean;
}

interface NameRule {
  name: string;
  port: number | undefined;
}

/** The entries of a list as written: split on commas and white space, empty ones dropped. */
export function hostEntries(text: string | undefined): string[] {
  return (text ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
}

/**
 * The entries as one matcher. Throws a TypeError naming the first entry that is no host, domain, address or
 * range (a URL, a path, a bad prefix length), so that a mistyped NO_PROXY stops the start rather than send a
 * host through the proxy that the user meant to keep direct.
 */
export function hostRules(entries: readonly string[]): HostRules {
  let all = false;
  const names: NameRule[] = [];
  const addresses: { address: string; port: number | undefined }[] = [];
  const ranges = new BlockList();
  let empty = true;
  for (const raw of entries) {
    const entry = raw.toLowerCase();
    empty = false;
    if (entry === '*') {
      all = true;
      continue;
    }
    const range = rangeOf(entry);
    if (range !== undefined) {
      ranges.addSubnet(range.address, range.prefix, range.family);
      continue;
    }
    const { host, port } = splitPort(entry, raw);
    if (isIP(host) !== 0) addresses.push({ address: host, port });
    else names.push({ name: checkedName(host.replace(/^\*?\./, ''), raw), port });
  }
  return {
    empty,
    matches(target, port) {
      if (all) return true;
      const host = target.toLowerCase().replace(/^\[|\]$/g, '');
      const family = isIP(host);
      if (family !== 0) {
        if (ranges.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
        return addresses.some((a) => a.address === host && (a.port === undefined || a.port === port));
      }
      const name = host.replace(/\.$/, '');
      return names.some(
        (rule) => (rule.port === undefined || rule.port === port) && (name === rule.name || name.endsWith(`.${rule.name}`)),
      );
    },
  };
}

function rangeOf(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = entry.indexOf('/');
  if (slash < 0) return undefined;
  const address = entry.slice(0, slash).replace(/^\[|\]$/g, '');
  const bits = entry.slice(slash + 1);
  const family = isIP(address);
  const width = family === 4 ? 32 : 128;
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (family === 0) throw new TypeError(NOT_A_HOST(entry));
  if (!(prefix >= 0 && prefix <= width)) throw new TypeError(`"${entry}" is not an address range: the prefix length goes up to ${width}`);
  return { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** `host:port`, `[v6]:port`, or a bare host or address (an IPv6 address with colons and no brackets has no port). */
function splitPort(entry: string, raw: string): { host: string; port: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed !== null) return { host: bracketed[1] as string, port: portOf(bracketed[2], raw) };
  if (isIP(entry) === 6) return { host: entry, port: undefined };
  const match = /^([^:]+):(\d+)$/.exec(entry);
  return match === null ? { host: entry, port: undefined } : { host: match[1] as string, port: portOf(match[2], raw) };
}

function portOf(digits: string | undefined, raw: string): number | undefined {
  if (digits === undefined) return undefined;
  const port = Number(digits);
  if (port < 1 || port > 65_535) throw new TypeError(`"${raw}" has a port outside 1 to 65535`);
  return port;
}

const NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/;

const NOT_A_HOST = (raw: string) =>
  `"${raw}" is not a host name, a domain, an address or an address range (write the host alone, no scheme or path)`;

function checkedName(name: string, raw: string): string {
  if (!NAME.test(name)) throw new TypeError(NOT_A_HOST(raw));
  return name.replace(/\.$/, '');
}
