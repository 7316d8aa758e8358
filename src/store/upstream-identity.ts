// Where a stored value came from. Every key the service stores or shares (last good values in L1, SQLite
// and Redis, budget ledgers and back-offs, single-flight locks and recorded failures) starts with the
// scope of the upstream it belongs to, so that live mode never answers from what sandbox mode stored, nor
// from what another provider URL or account stored, and a changed key or URL starts a fresh ledger.
//
//   sandbox:<name>          the built-in simulators listen on ephemeral ports, so their URL is no identity;
//                           a sandbox restart on the same state still finds its sandbox values.
//   live:<name>@<16 hex>    the first 64 bits of SHA-256 over the upstream's URL and credentials: stable
//                           across restarts and replicas, different for another URL or account, and no
//                           way back to the credential.
//
// Scopes are computed once at start; a request only concatenates a precomputed prefix. A new upstream (or
// a second budget on an existing one) gets its scope by adding a line to `upstreamIdentities`.
import { createHash } from 'node:crypto';
import type { Config, DataMode } from '../core/config.js';

export interface UpstreamIdentity {
  /** The base URL requests go to, as configured. */
  url: string;
  /** Whatever selects the account behind that URL; only a hash of it is ever kept. */
  credentials: readonly (string | undefined)[];
}

/** The identities of every upstream the configuration names, by the names routes and budgets use. @internal */
export function upstreamIdentities(config: Config): Record<string, UpstreamIdentity> {
  const { alphaVantage, massive, overview, broker } = config;
  return {
    alphaVantage: { url: alphaVantage.url, credentials: [alphaVantage.apiKey] },
    massive: { url: massive.url, credentials: [massive.apiKey] },
    yahoo: { url: overview.url, credentials: [] },
    // The gateway serves whichever user logged in to it; the URL is all the service knows before it asks.
    ibkr: { url: broker.ibkr.url, credentials: [] },
    tastytrade: { url: broker.tastytrade.url, credentials: [broker.tastytrade.clientSecret, broker.tastytrade.refreshToken] },
    // BROKER=none: the routes answer PROVIDER_NOT_CONFIGURED before anything is stored.
    none: { url: '', credentials: [] },
  };
}

/** The key scope of one upstream: its name in the sandbox, a hash of its URL and account when live. @internal */
export function scopeOf(mode: DataMode, name: string, identity: UpstreamIdentity): string {
  return mode === 'sandbox' ? `sandbox:${name}` : `live:${name}@${fingerprint(identity)}`;
}

/** JSON keeps the parts apart (no "ab"+"c" = "a"+"bc"); the label keeps this hash from meaning anything else. */
function fingerprint(identity: UpstreamIdentity): string {
  const parts = JSON.stringify([identity.url, ...identity.credentials.map((c) => c ?? null)]);
  return createHash('sha256').update('market-data-proxy upstream identity v1\n').update(parts).digest('hex').slice(0, 16);
}

export class StateScopes {
  private readonly scopes: ReadonlyMap<string, string>;

  constructor(
    readonly mode: DataMode,
    identities: Record<string, UpstreamIdentity>,
  ) {
    this.scopes = new Map(Object.entries(identities).map(([name, identity]) => [name, scopeOf(mode, name, identity)]));
  }

  static fromConfig(config: Config): StateScopes {
    return new StateScopes(config.mode, upstreamIdentities(config));
  }

  /** The key prefix for everything stored on behalf of the upstream `name`. */
  of(name: string): string {
    const scope = this.scopes.get(name);
    if (scope === undefined)
      throw new Error(`no upstream identity for "${name}": add it to upstreamIdentities (src/store/upstream-identity.ts)`);
    return scope;
  }
}
