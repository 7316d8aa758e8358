// Chooses the broker by `config.broker.kind`. Options here are for tests and benchmarks; the service
// uses the defaults.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { StateStore } from '../store/state-store.js';
import type { StateScopes } from '../store/upstream-identity.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../upstreams/ibkr/ibkr-broker.js';
import { ibkrPacerOptions } from '../upstreams/ibkr/ibkr-gateway.js';
import { TastytradeBroker, type TastytradeBrokerOptions } from '../upstreams/tastytrade/tastytrade-broker.js';
import type { Broker } from './broker.js';
import { NotConfiguredBroker } from './not-configured-broker.js';
import { type Pacer, RequestPacer } from './request-pacer.js';
import { SharedRequestPacer } from './shared-request-pacer.js';

export interface CreateBrokerOptions {
  ibkr?: Partial<Omit<IbkrBrokerOptions, 'url' | 'tlsVerify' | 'logger'>>;
  tastytrade?: Partial<Omit<TastytradeBrokerOptions, 'url' | 'clientSecret' | 'refreshToken' | 'logger'>>;
}

/** What the broker shares with other replicas: the IBKR pacing, through Redis when there is one, under the gateway's scope. */
export interface SharedState {
  store: Pick<StateStore, 'redis' | 'heartbeat'>;
  scopes: StateScopes;
}

export function createBroker(config: Config, logger: Logger, options: CreateBrokerOptions = {}, shared?: SharedState): Broker {
  const { broker, upstreamTimeoutMs } = config;
  switch (broker.kind) {
    case 'none':
      return new NotConfiguredBroker('none', 'No broker is configured (BROKER=none): set BROKER to ibkr or tastytrade.');
    case 'ibkr': {
      const gateway = { pacer: ibkrPacer(config, shared), ...options.ibkr?.gateway };
      return new IbkrBroker({ timeoutMs: upstreamTimeoutMs, ...options.ibkr, gateway, url: broker.ibkr.url, tlsVerify: broker.ibkr.tlsVerify, logger });
    }
    case 'tastytrade': {
      const { url, clientSecret, refreshToken } = broker.tastytrade;
      if (clientSecret === undefined || refreshToken === undefined) {
        return new NotConfiguredBroker('tastytrade', 'Tastytrade is not configured: set TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN.');
      }
      return new TastytradeBroker({ timeoutMs: upstreamTimeoutMs, ...options.tastytrade, url, clientSecret, refreshToken, logger });
    }
  }
}

/** One pacing per gateway: shared by every replica through Redis when there is one. */
function ibkrPacer(config: Config, shared: SharedState | undefined): Pacer {
  const options = ibkrPacerOptions(config.broker.ibkr.requestsPerSecond);
  const { redis, heartbeat } = shared?.store ?? {};
  if (shared === undefined || redis === undefined || heartbeat === undefined) return new RequestPacer(options);
  return new SharedRequestPacer(options, redis, heartbeat, shared.scopes.of('ibkr'));
}
