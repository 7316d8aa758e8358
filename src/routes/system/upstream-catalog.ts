// The upstreams the status page always lists, whether or not they have been called yet. Adapters name
// their health, budget and cache records freely ("alphaVantage", "massive", ...); aliases map them here,
// and a name that matches nothing still appears under its own name.
import type { Config } from '../../config.js';

export interface UpstreamInfo {
  id: string;
  label: string;
  /** Names an adapter may use for its health/budget records. */
  aliases: readonly string[];
  /** Public route prefix whose responses are counted as this upstream's cache outcomes. */
  routePrefix: string | null;
  configured(config: Config): boolean;
}

export const UPSTREAMS: readonly UpstreamInfo[] = [
  {
    id: 'provider-a',
    label: 'Provider A (quotes, indicators)',
    aliases: ['provider-a', 'alphaVantage', 'alpha-vantage', 'alphavantage'],
    routePrefix: '/api/provider-a/',
    configured: (c) => c.alphaVantage.apiKey !== undefined,
  },
  {
    id: 'provider-b',
    label: 'Provider B (dividends)',
    aliases: ['provider-b', 'massive'],
    routePrefix: '/api/provider-b/',
    configured: (c) => c.massive.apiKey !== undefined,
  },
  {
    id: 'overview',
    label: 'Market overview',
    aliases: ['overview', 'market', 'yahoo', 'market-overview'],
    routePrefix: '/api/market/',
    // The overview source takes no credentials.
    configured: () => true,
  },
  {
    id: 'broker',
    label: 'Broker',
    aliases: ['broker', 'ibkr', 'tastytrade'],
    routePrefix: '/api/broker/',
    configured: (c) =>
      c.broker.kind === 'ibkr' ||
      (c.broker.kind === 'tastytrade' && c.broker.tastytrade.clientSecret !== undefined && c.broker.tastytrade.refreshToken !== undefined),
  },
];

/** The catalogue id for a record name; unknown names stand for themselves. */
export function upstreamIdOf(name: string): string {
  const lower = name.toLowerCase();
  return UPSTREAMS.find((u) => u.aliases.some((a) => a.toLowerCase() === lower))?.id ?? name;
}

/** The catalogue id whose public routes this URL belongs to, or null. */
export function upstreamOfRoute(url: string): string | null {
  return UPSTREAMS.find((u) => u.routePrefix !== null && url.startsWith(u.routePrefix))?.id ?? null;
}
