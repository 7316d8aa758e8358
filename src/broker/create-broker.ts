// Chooses the broker by `config.broker.kind`. Options here are for tests and benchmarks; the service
// uses the defaults.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../upstreams/ibkr/ibkr-broker.js';
import { TastytradeBroker, type TastytradeBrokerOptions } from '../upstreams/tastytrade/tastytrade-broker.js';
import type { Broker } from './broker.js';
import { NotConfiguredBroker } from './not-configured-broker.js';

export interface CreateBrokerOptions {
  ibkr?: Partial<Omit<IbkrBrokerOptions, 'url' | 'tlsVerify' | 'logger'>>;
  tastytrade?: Partial<Omit<TastytradeBrokerOptions, 'url' | 'clientSecret' | 'refreshToken' | 'logger'>>;
}

export function createBroker(config: Config, logger: Logger, options: CreateBrokerOptions = {}): Broker {
  const { broker, upstreamTimeoutMs } = config;
  switch (broker.kind) {
    case 'none':
      return new NotConfiguredBroker('none', 'No broker is configured (BROKER=none): set BROKER to ibkr or tastytrade.');
    case 'ibkr':
      return new IbkrBroker({ timeoutMs: upstreamTimeoutMs, ...options.ibkr, url: broker.ibkr.url, tlsVerify: broker.ibkr.tlsVerify, logger });
    case 'tastytrade': {
      const { url, clientSecret, refreshToken } = broker.tastytrade;
      if (clientSecret === undefined || refreshToken === undefined) {
        return new NotConfiguredBroker('tastytrade', 'Tastytrade is not configured: set TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN.');
      }
      return new TastytradeBroker({ timeoutMs: upstreamTimeoutMs, ...options.tastytrade, url, clientSecret, refreshToken, logger });
    }
  }
}
