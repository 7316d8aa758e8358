// Starts every simulated upstream on loopback and points a configuration at them. The service then
// reaches them over real HTTP through the same adapters as in live mode: only base URLs and keys differ.
import type { Config } from '../core/config.js';
import { createAlphaVantageSimulator } from './alpha-vantage/alpha-vantage-simulator.js';
import type { SimulatedUpstream } from './simulated-upstream.js';
import { createMassiveSimulator, type MassiveSimulator } from './massive/massive-simulator.js';
import { createYahooSimulator, type YahooSimulator } from './yahoo/yahoo-simulator.js';
import { createIbkrSimulator, type IbkrSimulator, type IbkrSimulatorOptions } from './ibkr/ibkr-simulator.js';
import { createTastytradeSimulator, type TastytradeSimulator, type TastytradeSimulatorOptions } from './tastytrade/tastytrade-simulator.js';

/** Credentials the simulators accept; never valid anywhere else. */
export const SANDBOX_CREDENTIALS = {
  alphaVantageKey: 'sandbox-alpha-vantage-key',
  massiveKey: 'sandbox-massive-key',
  tastytradeClientSecret: 'sandbox-tastytrade-secret',
  tastytradeRefreshToken: 'sandbox-tastytrade-refresh-token',
} as const;

export interface Sandbox {
  alphaVantage: SimulatedUpstream;
  massive: MassiveSimulator;
  yahoo: YahooSimulator;
  ibkr: IbkrSimulator;
  tastytrade: TastytradeSimulator;
  all(): SimulatedUpstream[];
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Listen on fixed ports (base, base+1, … in the order of `all()`) instead of ephemeral ones. */
  portBase?: number;
  /** The simulated Alpha Vantage plan (0 = no limit); defaults to the documented 5/min, 500/day, 1/s, free. */
  alphaVantage?: { callsPerMinute?: number; callsPerDay?: number; burstPerSecond?: number; plan?: 'free' | 'premium' };
  /** The market data simulators' clock (Alpha Vantage and Yahoo: prices, sessions, limits); tests hold it still. */
  now?: () => number;
  /** The IBKR gateway's market sessions, the account's market data and websocket timings (tests hold the market open or closed). */
  ibkr?: Pick<IbkrSimulatorOptions, 'sessionAt' | 'stream' | 'marketData'>;
  /** The Tastytrade market's sessions, the quote tokens' level and DXLink timings. */
  tastytrade?: Pick<TastytradeSimulatorOptions, 'sessionAt' | 'stream' | 'level'>;
}

/** Simulate the plan the service is configured for, so the guard and the provider agree. */
export function sandboxOptionsFor(config: Config): SandboxOptions {
  const { callsPerMinute, callsPerDay, minIntervalMs, plan } = config.alphaVantage;
  return { alphaVantage: { callsPerMinute, callsPerDay, burstPerSecond: minIntervalMs > 0 ? 1 : 0, plan } };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const port = (i: number) => (options.portBase === undefined ? undefined : options.portBase + i);
  const alphaVantage = createAlphaVantageSimulator({
    validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey],
    port: port(0),
    now: options.now,
    ...options.alphaVantage,
  });
  const massive = createMassiveSimulator({ validKeys: [SANDBOX_CREDENTIALS.massiveKey], port: port(1) });
  const yahoo = createYahooSimulator({ port: port(2), now: options.now });
  const ibkr = await createIbkrSimulator({ port: port(3), ...options.ibkr });
  const tastytrade = createTastytradeSimulator({
    clientSecret: SANDBOX_CREDENTIALS.tastytradeClientSecret,
    refreshToken: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
    port: port(4),
    ...options.tastytrade,
  });
  const upstreams = [alphaVantage, massive, yahoo, ibkr, tastytrade];
  await Promise.all(upstreams.map((u) => u.listen()));
  return {
    alphaVantage,
    massive,
    yahoo,
    ibkr,
    tastytrade,
    all: () => upstreams,
    close: async () => {
      await Promise.all(upstreams.map((u) => u.close()));
    },
  };
}

/** The configuration with every upstream pointed at the sandbox and given sandbox credentials. */
export function sandboxConfig(config: Config, sandbox: Sandbox): Config {
  return {
    ...config,
    alphaVantage: { ...config.alphaVantage, url: `${sandbox.alphaVantage.origin}/query`, apiKey: SANDBOX_CREDENTIALS.alphaVantageKey },
    massive: { ...config.massive, url: sandbox.massive.origin, apiKey: SANDBOX_CREDENTIALS.massiveKey },
    overview: { ...config.overview, url: sandbox.yahoo.origin },
    broker: {
      ...config.broker,
      ibkr: { ...config.broker.ibkr, url: sandbox.ibkr.baseUrl },
      tastytrade: {
        url: sandbox.tastytrade.origin,
        clientSecret: SANDBOX_CREDENTIALS.tastytradeClientSecret,
        refreshToken: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
      },
    },
  };
}
