// The broker BROKER names, IBKR's gateway or Tastytrade, and its real-time quote feed where BROKER_STREAMING
// allows it. The broker's keep-alive starts with the app (app.ts) and stops with close().
import type { Logger } from 'pino';
import type { Broker } from '../broker/broker.js';
import type { BrokerQuoteStream } from '../broker/quote-stream.js';
import { type Pacer, RequestPacer } from '../broker/request-pacer.js';
import { SharedRequestPacer } from '../broker/shared-request-pacer.js';
import type { Config } from '../core/config.js';
import { type Configured, configured, notConfigured } from '../core/configured.js';
import { IBKR } from '../core/upstream-ids.js';
import type { StateStore } from '../store/state-store.js';
import type { StateScopes } from '../store/upstream-identity.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../upstreams/ibkr/ibkr-broker.js';
import { ibkrPacerOptions } from '../upstreams/ibkr/ibkr-gateway.js';
import { IbkrQuoteStream, type IbkrQuoteStreamOptions } from '../upstreams/ibkr/ibkr-quote-stream.js';
import type { OutboundProxy } from '../upstreams/outbound-proxy.js';
import { TastytradeBroker, type TastytradeBrokerOptions } from '../upstreams/tastytrade/tastytrade-broker.js';
import { TastytradeQuoteStream, type TastytradeQuoteStreamOptions } from '../upstreams/tastytrade/tastytrade-quote-stream.js';

export interface BrokerOptions {
  ibkr?: Partial<Omit<IbkrBrokerOptions, 'url' | 'tlsVerify' | 'logger'>>;
  /** The IBKR websocket's timings (heartbeat watch, renewals, back-off). */
  ibkrStream?: Partial<Omit<IbkrQuoteStreamOptions, 'url' | 'tlsVerify' | 'session' | 'logger'>>;
  /** The shared stream's REST retention and renewal period. */
  streaming?: { retentionMs?: number; renewMs?: number };
  tastytrade?: Partial<Omit<TastytradeBrokerOptions, 'url' | 'clientSecret' | 'refreshToken' | 'logger'>>;
  /** The DXLink feed's timings (keepalives, token renewal, back-off). */
  tastytradeStream?: Partial<Omit<TastytradeQuoteStreamOptions, 'session' | 'logger'>>;
}

/** The broker BROKER names; not configured with BROKER=none or Tastytrade without credentials. */
export function createBroker(
  config: Config,
  logger: Logger,
  options: BrokerOptions,
  store: StateStore,
  scopes: StateScopes,
  outbound: OutboundProxy,
): Configured<Broker> {
  const { broker, upstreamTimeoutMs } = config;
  switch (broker.kind) {
    case 'none':
      return notConfigured('No broker is configured (BROKER=none): set BROKER to ibkr or tastytrade.');
    case 'ibkr': {
      const gateway = { pacer: ibkrPacer(config, store, scopes), ...options.ibkr?.gateway };
      return configured<Broker>(
        new IbkrBroker({
          timeoutMs: upstreamTimeoutMs,
          ...options.ibkr,
          gateway,
          url: broker.ibkr.url,
          tlsVerify: broker.ibkr.tlsVerify,
          logger,
          outbound,
        }),
      );
    }
    case 'tastytrade': {
      const { url, clientSecret, refreshToken } = broker.tastytrade;
      if (clientSecret === undefined || refreshToken === undefined) {
        return notConfigured('Tastytrade is not configured: set TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN.');
      }
      return configured<Broker>(
        new TastytradeBroker({ timeoutMs: upstreamTimeoutMs, ...options.tastytrade, url, clientSecret, refreshToken, logger, outbound }),
      );
    }
  }
}

/** The broker's real-time feed, where BROKER_STREAMING allows it: IBKR's websocket or Tastytrade's DXLink. */
export function quoteFeed(
  config: Config,
  logger: Logger,
  broker: Configured<Broker>,
  options: BrokerOptions,
): (() => BrokerQuoteStream) | undefined {
  if (config.broker.streaming === 'off' || !broker.configured) return undefined;
  const session = broker.client;
  if (session instanceof IbkrBroker) {
    const { url, tlsVerify } = config.broker.ibkr;
    return () => new IbkrQuoteStream({ ...options.ibkrStream, url, tlsVerify, session, logger, outbound: session.outbound });
  }
  if (session instanceof TastytradeBroker)
    return () => new TastytradeQuoteStream({ ...options.tastytradeStream, session, logger, outbound: session.outbound });
  return undefined;
}

/** One pacing per gateway: shared by every replica through Redis when there is one. */
function ibkrPacer(config: Config, store: StateStore, scopes: StateScopes): Pacer {
  const options = ibkrPacerOptions(config.broker.ibkr.requestsPerSecond);
  const shared = store.shared;
  if (shared === undefined) return new RequestPacer(options);
  return new SharedRequestPacer(options, shared, scopes.of(IBKR));
}
