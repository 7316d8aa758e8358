// The broker when there is none to talk to (BROKER=none, or Tastytrade without credentials): health says
// so with a 200, every data call answers 503 PROVIDER_NOT_CONFIGURED, and no timer or socket exists.
import type { BrokerKind } from '../core/config.js';
import { ApiError } from '../core/errors.js';
import type { Broker, BrokerAccount, BrokerHealth, BrokerPosition, BrokerQuotes } from './broker.js';

export class NotConfiguredBroker implements Broker {
  constructor(
    readonly kind: BrokerKind,
    private readonly reason: string,
  ) {}

  async health(): Promise<BrokerHealth> {
    return {
      broker: this.kind,
      status: 'not_configured',
      authenticated: false,
      connected: false,
      checkedAt: new Date().toISOString(),
      latencyMs: 0,
      message: this.reason,
    };
  }

  accounts(): Promise<BrokerAccount[]> {
    return Promise.reject(this.error());
  }

  positions(): Promise<BrokerPosition[]> {
    return Promise.reject(this.error());
  }

  quotes(): Promise<BrokerQuotes> {
    return Promise.reject(this.error());
  }

  start(): void {}

  async close(): Promise<void> {}

  error(): ApiError {
    return new ApiError('PROVIDER_NOT_CONFIGURED', this.reason);
  }
}

/** Answers PROVIDER_NOT_CONFIGURED before the cache, so an absent broker never shows up as a failing upstream. */
export function ensureConfigured(broker: Broker): void {
  if (broker instanceof NotConfiguredBroker) throw broker.error();
}
