// The Alpha Vantage functions the service does not read itself, passed on through the same cache, single
// flight, circuit, budget and pacing as the ones it does: each family is fresh for its own window
// (CACHE_AV_<FAMILY>_SECONDS), an indicator or a series on an intraday interval for the intraday family's.
// A premium function on a free plan is answered with the provider's own notice before the cache is asked.
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { AvFamily } from '../core/config-schema.js';
import { type Configured, use } from '../core/configured.js';
import { PlanRefusalError } from '../core/errors.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import type { AlphaVantageClient, ForwardCall, Forwarded } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { functionSpec } from '../wire/alpha-vantage/functions.js';
import { INTRADAY_INTERVALS, type Interval } from '../wire/alpha-vantage/indicators.js';
import { PREMIUM_ENDPOINT } from '../wire/alpha-vantage/notices.js';
import { alphaVantageKeys } from './cache-keys.js';

export interface ForwardServiceOptions {
  cache: UpstreamCache;
  windows: Record<AvFamily, CacheWindow>;
  /** Provider A's state scope. */
  scope: string;
  alphaVantage: Configured<AlphaVantageClient>;
}

export class ForwardService {
  constructor(private readonly options: ForwardServiceOptions) {}

  /** `call` as AlphaVantageQuery reads it: a documented function, its documented parameters only. */
  get(call: ForwardCall): Promise<CacheResult<Forwarded>> {
    const { cache, scope, alphaVantage } = this.options;
    if (alphaVantage.configured && !alphaVantage.client.planAllows(call.fn)) throw new PlanRefusalError(PREMIUM_ENDPOINT.Information);
    return cache.fetch(alphaVantageKeys.forwarded(scope, call), this.window(call), () => use(alphaVantage).forward(call), {
      upstream: ALPHA_VANTAGE,
    });
  }

  private window(call: ForwardCall): CacheWindow {
    const { windows } = this.options;
    const interval = call.params.find(([name]) => name === 'interval')?.[1];
    if (interval !== undefined && INTRADAY_INTERVALS.has(interval as Interval)) return windows.INTRADAY;
    return windows[functionSpec(call.fn)?.family ?? 'MARKET'];
  }
}
