// One name per upstream: the id every stored key, budget, circuit, pacer and log line uses for it, and,
// beside it, the names users see (the status area it is reported under, its X-Data-Source value, its
// label in messages). These are the names the service always used; this module only keeps them in one
// place, so that no other module spells an upstream's name itself.
import type { Config } from './config.js';

export const ALPHA_VANTAGE = 'alphaVantage';
export const MASSIVE = 'massive';
export const YAHOO = 'yahoo';
export const IBKR = 'ibkr';
const TASTYTRADE = 'tastytrade';

const UPSTREAM_IDS = [ALPHA_VANTAGE, MASSIVE, YAHOO, IBKR, TASTYTRADE] as const;
export type UpstreamId = (typeof UPSTREAM_IDS)[number];

/** The areas `/api/system/status` and `/metrics` report upstreams under (the public API's sections). */
export type AreaId = 'provider-a' | 'provider-b' | 'overview' | 'broker';

export interface Upstream {
  id: UpstreamId;
  /** How log lines and error messages name it. */
  label: string;
  area: AreaId;
  /** Its `X-Data-Source` value, for the upstreams whose values are served as quotes or indicators. */
  dataSource?: 'alpha-vantage' | 'yahoo';
}

export const UPSTREAMS: Readonly<Record<UpstreamId, Upstream>> = {
  alphaVantage: { id: ALPHA_VANTAGE, label: 'Alpha Vantage', area: 'provider-a', dataSource: 'alpha-vantage' },
  massive: { id: MASSIVE, label: 'Massive', area: 'provider-b' },
  yahoo: { id: YAHOO, label: 'Yahoo', area: 'overview', dataSource: 'yahoo' },
  ibkr: { id: IBKR, label: 'IBKR gateway', area: 'broker' },
  tastytrade: { id: TASTYTRADE, label: 'Tastytrade', area: 'broker' },
};

export interface Area {
  id: AreaId;
  label: string;
  /** Public route prefix whose answers are counted as this area's cache outcomes. */
  routePrefix: string;
  configured(config: Config): boolean;
}

/** The areas the status page always lists, whether or not anything has been called yet. */
export const AREAS: readonly Area[] = [
  {
    id: 'provider-a',
    label: 'Provider A (quotes, indicators)',
    routePrefix: '/api/provider-a/',
    configured: (c) => c.alphaVantage.apiKey !== undefined,
  },
  { id: 'provider-b', label: 'Provider B (dividends)', routePrefix: '/api/provider-b/', configured: (c) => c.massive.apiKey !== undefined },
  // The overview's source takes no credentials.
  { id: 'overview', label: 'Market overview', routePrefix: '/api/market/', configured: () => true },
  {
    id: 'broker',
    label: 'Broker',
    routePrefix: '/api/broker/',
    configured: (c) =>
      c.broker.kind === 'ibkr' ||
      (c.broker.kind === 'tastytrade' && c.broker.tastytrade.clientSecret !== undefined && c.broker.tastytrade.refreshToken !== undefined),
  },
];

function isUpstreamId(name: string): name is UpstreamId {
  return (UPSTREAM_IDS as readonly string[]).includes(name);
}

/** How a message users read names an upstream (its label); a name that is no upstream (an area) stands for itself. */
export function publicName(name: string): string {
  return isUpstreamId(name) ? UPSTREAMS[name].label : name;
}

/** The area a health, budget or cache record belongs to; a name that is no upstream stands for itself. */
export function areaOf(name: string): string {
  return isUpstreamId(name) ? UPSTREAMS[name].area : name;
}

/** The area whose public routes this URL belongs to, or null. */
export function areaOfRoute(url: string): AreaId | null {
  return AREAS.find((a) => url.startsWith(a.routePrefix))?.id ?? null;
}
