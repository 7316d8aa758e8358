// The health check is live but cheap: one check per window (~1.5 s) whatever the traffic, concurrent
// callers sharing the one in flight. Each check is recorded in UpstreamHealth for /api/system/status, an
// answer the check could not read as drift too (the check never throws, so no track() sees it).
import type { Broker, BrokerHealth } from '../broker/broker.js';
import { type CacheEntry, makeEntry } from '../cache/cache-store.js';
import { ApiError } from '../core/errors.js';
import type { UpstreamHealth } from '../health/upstream-health.js';

export const HEALTH_WINDOW = { freshMs: 1_500, staleMs: 0 };

export class HealthMemo {
  private entry: CacheEntry<BrokerHealth> | undefined;
  private pending: Promise<CacheEntry<BrokerHealth>> | undefined;

  constructor(
    private readonly broker: Broker,
    private readonly upstreams: UpstreamHealth,
  ) {}

  async get(): Promise<{ entry: CacheEntry<BrokerHealth>; status: 'HIT' | 'MISS' }> {
    if (this.entry !== undefined && Date.now() < this.entry.freshUntil) return { entry: this.entry, status: 'HIT' };
    this.pending ??= this.check().finally(() => {
      this.pending = undefined;
    });
    return { entry: await this.pending, status: 'MISS' };
  }

  private async check(): Promise<CacheEntry<BrokerHealth>> {
    const { unreadable, ...health } = await this.broker.health();
    if (unreadable !== undefined) this.upstreams.recordDrift(this.broker.kind, unreadable.reason, unreadable.message);
    if (health.status === 'connected') this.upstreams.recordSuccess(this.broker.kind);
    else if (health.status !== 'not_configured')
      this.upstreams.recordError(this.broker.kind, new ApiError('BROKER_UNAVAILABLE', health.message));
    this.entry = makeEntry(health, HEALTH_WINDOW);
    return this.entry;
  }
}
