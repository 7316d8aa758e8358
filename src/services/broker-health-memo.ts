// The health check is live but cheap: one check per window (~1.5 s) whatever the traffic, concurrent
// callers sharing the one in flight. Each check is recorded in UpstreamHealth for /api/system/status, an
// answer the check could not read as drift too (the check never throws, so no track() sees it). Without a
// broker the state is not_configured, with the reason, and nothing is recorded.
import type { Broker, BrokerHealth } from '../broker/broker.js';
import { type CacheEntry, makeEntry } from '../cache/cache-store.js';
import type { BrokerKind } from '../core/config.js';
import type { Configured } from '../core/configured.js';
import { ApiError } from '../core/errors.js';
import type { UpstreamHealth } from '../health/upstream-health.js';

const HEALTH_WINDOW = { freshMs: 1_500, staleMs: 0 };

export class HealthMemo {
  private entry: CacheEntry<BrokerHealth> | undefined;
  private pending: Promise<CacheEntry<BrokerHealth>> | undefined;

  constructor(
    private readonly kind: BrokerKind,
    private readonly broker: Configured<Broker>,
    private readonly upstreams: UpstreamHealth,
  ) {}

  /** The last check, or undefined before the first; no call. */
  get last(): CacheEntry<BrokerHealth> | undefined {
    return this.entry;
  }

  async get(): Promise<{ entry: CacheEntry<BrokerHealth>; status: 'HIT' | 'MISS' }> {
    if (this.entry !== undefined && Date.now() < this.entry.freshUntil) return { entry: this.entry, status: 'HIT' };
    this.pending ??= this.check().finally(() => {
      this.pending = undefined;
    });
    return { entry: await this.pending, status: 'MISS' };
  }

  private async check(): Promise<CacheEntry<BrokerHealth>> {
    this.entry = makeEntry(await this.read(), HEALTH_WINDOW);
    return this.entry;
  }

  private async read(): Promise<BrokerHealth> {
    const { kind, broker, upstreams } = this;
    if (!broker.configured) {
      const checkedAt = new Date().toISOString();
      return {
        broker: kind,
        status: 'not_configured',
        authenticated: false,
        connected: false,
        checkedAt,
        latencyMs: 0,
        message: broker.reason,
      };
    }
    const { unreadable, ...health } = await broker.client.health();
    if (unreadable !== undefined) upstreams.recordDrift(kind, unreadable.reason, unreadable.message);
    if (health.status === 'connected') upstreams.recordSuccess(kind);
    else upstreams.recordError(kind, new ApiError('BROKER_UNAVAILABLE', health.message));
    return health;
  }
}
