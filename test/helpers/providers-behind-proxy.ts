// The providers as a live service behind a corporate proxy sees them: their real host names, which resolve at
// the proxy alone (test/helpers/forward-proxy.ts), to the simulators behind a TLS-inspecting end whose
// certificates a private CA signs; and an IBKR gateway on another machine (REMOTE_GATEWAY), tunnelled to the
// simulated gateway as it is (its own self-signed certificate, not inspected).
import type { TestContext } from 'node:test';
import { createAlphaVantageSimulator } from '../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { createIbkrSimulator } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import { createMassiveSimulator } from '../../src/sandbox/massive/massive-simulator.js';
import type { SimulatedUpstream } from '../../src/sandbox/simulated-upstream.js';
import { createTastytradeSimulator } from '../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { createYahooSimulator } from '../../src/sandbox/yahoo/yahoo-simulator.js';
import { type ForwardProxyOptions, privateCa, startForwardProxy, startInspection } from './forward-proxy.js';

export const HOSTS = {
  alphaVantage: 'www.alphavantage.co',
  massive: 'api.massive.com',
  yahoo: 'query1.finance.yahoo.com',
  tastytrade: 'api.tastyworks.com',
  dxlink: 'tasty-openapi-ws.dxfeed.com',
} as const;
/** A gateway on another machine, reached through the proxy only when PROXY_ALSO_FOR names it. */
export const REMOTE_GATEWAY = 'ibkr-gateway.example.test';

export const KEYS = {
  ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
  MASSIVE_API_KEY: SANDBOX_CREDENTIALS.massiveKey,
  TASTYTRADE_CLIENT_SECRET: SANDBOX_CREDENTIALS.tastytradeClientSecret,
  TASTYTRADE_REFRESH_TOKEN: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
};

async function started<T extends SimulatedUpstream>(t: TestContext, upstream: T): Promise<T> {
  await upstream.listen();
  t.after(() => upstream.close());
  return upstream;
}

/** The simulators, the inspecting end and the CA, and a proxy that resolves the providers' names to them. */
export async function providersBehindProxy(t: TestContext, proxyOptions: ForwardProxyOptions = {}) {
  const alphaVantage = await started(t, createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey] }));
  const massive = await started(t, createMassiveSimulator({ validKeys: [SANDBOX_CREDENTIALS.massiveKey] }));
  const yahoo = await started(t, createYahooSimulator());
  const tastytrade = await started(
    t,
    createTastytradeSimulator({
      clientSecret: SANDBOX_CREDENTIALS.tastytradeClientSecret,
      refreshToken: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
      sessionAt: () => 'regular',
      dxlinkOrigin: `wss://${HOSTS.dxlink}`,
    }),
  );
  const ibkr = await started(t, await createIbkrSimulator({ sessionAt: () => 'regular' }));
  const ca = await privateCa(t, Object.values(HOSTS));
  const at = (sim: SimulatedUpstream) => ({ host: '127.0.0.1', port: Number(new URL(sim.origin).port) });
  const inspection = await startInspection(t, ca, {
    [HOSTS.alphaVantage]: at(alphaVantage),
    [HOSTS.massive]: at(massive),
    [HOSTS.yahoo]: at(yahoo),
    [HOSTS.tastytrade]: at(tastytrade),
    [HOSTS.dxlink]: at(tastytrade),
  });
  const hosts = Object.fromEntries(Object.values(HOSTS).map((host) => [`${host}:443`, inspection]));
  const proxy = await startForwardProxy(t, { ...proxyOptions, hosts: { ...hosts, [`${REMOTE_GATEWAY}:5000`]: at(ibkr) } });
  return { alphaVantage, massive, yahoo, tastytrade, ibkr, ca, proxy };
}
