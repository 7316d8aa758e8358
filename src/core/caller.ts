// Who a request is, for everything that counts per caller: the per-caller rate limit, the stream caps, and the
// fair share of every provider budget. A caller is a client key (CLIENT_KEYS, sent as a bearer token), or else
// its address as TRUST_PROXY lets the service judge it: the address itself for IPv4, its /64 for IPv6, since one
// host is handed a whole /64 and would otherwise count as 2^64 callers.
//
// The callers a piece of work is done for travel with it in an AsyncLocalStorage context (`runAs`): a request
// runs as its caller, a stream topic's poll as the callers that hold the topic. A budget guard reads them when it
// decides on a provider call, so each call is put to the account of who caused it without every service and
// cache passing a caller along. Work started by nobody (none today) runs as SERVICE.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isIPv6 } from 'node:net';

export const CLIENT_SCOPES = ['market', 'broker', 'mcp'] as const;
export type ClientScope = (typeof CLIENT_SCOPES)[number];

/** One CLIENT_KEYS entry. The key itself is never held: only its SHA-256. */
export interface ClientKey {
  /** Shown in logs and metrics (`[A-Za-z0-9_.-]`, at most 40 characters). */
  name: string;
  /** SHA-256 of the key, lower-case hex. */
  sha256: string;
  /** Weight in the fair share of every provider budget (an address weighs 1). */
  share: number;
  scopes: ReadonlySet<ClientScope>;
  /** Requests per minute; undefined: RATE_LIMIT_PER_MINUTE. */
  ratePerMinute: number | undefined;
}

export interface Caller {
  /** Whose account provider calls, the rate limit and the stream caps count against: `key:<name>`, or the address. */
  readonly account: string;
  /** The weight in a fair share. */
  readonly weight: number;
  /** For metrics: the key's name, or `anonymous` (never an address). */
  readonly label: string;
  readonly key: ClientKey | undefined;
}

/** Work nobody asked for. */
export const SERVICE: Caller = { account: 'service', weight: 1, label: 'service', key: undefined };

const byAddress = new Map<string, Caller>();
const REMEMBERED = 4_096;

/** The anonymous caller at `address` (as request.ip reads it); one object per account, reused. */
export function addressCaller(address: string | undefined): Caller {
  const known = byAddress.get(address ?? '');
  if (known !== undefined) return known;
  if (byAddress.size >= REMEMBERED) byAddress.clear();
  const caller: Caller = { account: accountOf(address), weight: 1, label: 'anonymous', key: undefined };
  byAddress.set(address ?? '', caller);
  return caller;
}

export function keyCaller(key: ClientKey): Caller {
  return { account: `key:${key.name}`, weight: key.share, label: key.name, key };
}

/** An address's account: IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4, other IPv6 as its /64. @internal */
export function accountOf(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1] as string;
  if (address === '::1' || !isIPv6(address)) return address;
  return `${expand(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros (`2001:db8::1` -> 2001, db8, 0, …, 1). */
function expand(address: string): string[] {
  // A trailing dotted quad (`64:ff9b::192.0.2.1`) is the last two groups.
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((n) => n.toString(16)).join(':'),
  );
  const [head = '', tail] = hex.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16).toString(16));
}

/**
 * The scopes any one of which a key needs on a route: the market data routes `market`, the stream `market` or
 * `broker` (its broker topics are judged by the broker rule), `/mcp` `mcp`. Status, the docs and the metrics need
 * none; the broker routes have their own rule, which a `broker` key passes.
 */
export function scopesFor(route: string | undefined): readonly ClientScope[] | undefined {
  if (route === undefined) return undefined;
  if (route.startsWith('/api/provider-') || route.startsWith('/api/market/')) return ['market'];
  if (route === '/api/stream') return ['market', 'broker'];
  if (route === '/mcp') return ['mcp'];
  return undefined;
}

/** Work done for some callers, and what the budgets made of it. */
export interface Work {
  readonly callers: readonly Caller[];
  /** Set when a budget held these callers to their share: when it returns (ms since epoch). */
  heldUntil?: number;
}

const context = new AsyncLocalStorage<Work>();

/** Runs `work` on behalf of `callers` (everything it starts, awaits and schedules included). */
export function runAs<T>(callers: readonly Caller[], work: () => T): T {
  return context.run({ callers }, work);
}

/** Runs `fn` as `work`, which then says whether a budget held its callers to their share (a stream topic's poll). */
export function runWork<T>(work: Work, fn: () => T): T {
  return context.run(work, fn);
}

/** Work done for nobody: one list, since every cache hit asks (the hot path answers outside any request's context). */
const NOBODY: readonly Caller[] = [SERVICE];

/** Who the running work is done for; SERVICE when nobody is. */
export function currentCallers(): readonly Caller[] {
  const callers = context.getStore()?.callers;
  return callers === undefined || callers.length === 0 ? NOBODY : callers;
}

/** A budget held the running work's callers to their share until `until`. */
export function noteHeld(until: number): void {
  const work = context.getStore();
  if (work !== undefined) work.heldUntil = Math.max(work.heldUntil ?? 0, until);
}
