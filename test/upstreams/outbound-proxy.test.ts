// Live mode through a real forward proxy (test/helpers/forward-proxy.ts), the service in its own process with
// exactly the settings a user gives. The providers keep their real host names (the defaults of
// ALPHA_VANTAGE_URL, MASSIVE_URL, YAHOO_URL, TASTYTRADE_URL, and the DXLink address a quote token names):
// they resolve at the proxy alone, to the simulators behind a TLS-inspecting end whose certificates a
// private CA signs. So no call can reach a simulator except through the proxy, and the loopback rule (which
// keeps 127.0.0.1 direct) is not what is tested here: these targets are not loopback to the service.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createAlphaVantageSimulator } from '../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { createIbkrSimulator } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import { createMassiveSimulator } from '../../src/sandbox/massive/massive-simulator.js';
import type { SimulatedUpstream } from '../../src/sandbox/simulated-upstream.js';
import { createTastytradeSimulator } from '../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { createYahooSimulator } from '../../src/sandbox/yahoo/yahoo-simulator.js';
import { type ForwardProxyOptions, privateCa, startForwardProxy, startInspection } from '../helpers/forward-proxy.js';
import { startServerProcess } from '../helpers/server-process.js';
import { eventually } from '../stream/sse-client.js';

const HOSTS = {
  alphaVantage: 'www.alphavantage.co',
  massive: 'api.massive.com',
  yahoo: 'query1.finance.yahoo.com',
  tastytrade: 'api.tastyworks.com',
  dxlink: 'tasty-openapi-ws.dxfeed.com',
} as const;
/** A gateway on another machine, reached through the proxy only when PROXY_ALSO_FOR names it. */
const REMOTE_GATEWAY = 'ibkr-gateway.example.test';

const KEYS = {
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
async function providersBehindProxy(t: TestContext, proxyOptions: ForwardProxyOptions = {}) {
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

test('with only HTTPS_PROXY set (and the inspecting CA), every upstream call and the DXLink socket go through the proxy', async (t) => {
  const { alphaVantage, massive, yahoo, tastytrade, ca, proxy } = await providersBehindProxy(t);
  const service = await startServerProcess(t, {
    ...KEYS,
    BROKER: 'tastytrade',
    HTTPS_PROXY: proxy.url,
    NODE_EXTRA_CA_CERTS: ca.caFile,
  });
  const quote = await service.get('/api/provider-a/quote?symbol=IBM');
  assert.equal(quote.status, 200, quote.text);
  assert.equal(quote.body['Global Quote']['01. symbol'], 'IBM');
  const dividends = await service.get('/api/provider-b/dividends?symbol=AAPL');
  assert.equal(dividends.status, 200, dividends.text);
  const overview = await service.get('/api/market/overview');
  assert.equal(overview.status, 200, overview.text);
  const accounts = await service.get('/api/broker/accounts');
  assert.equal(accounts.status, 200, accounts.text);
  const quotes = await service.get('/api/broker/quotes?symbols=AAPL,MSFT');
  assert.equal(quotes.status, 200, quotes.text);
  await eventually(() => tastytrade.stream.openSockets === 1, 'the DXLink socket open', 20_000);

  for (const host of Object.values(HOSTS)) assert.ok(proxy.tunnelsTo(host) >= 1, `a CONNECT to ${host}`);
  assert.deepEqual(new Set(proxy.connects), new Set(Object.values(HOSTS).map((h) => `${h}:443`)), 'nothing else asked of the proxy');
  for (const sim of [alphaVantage, massive, yahoo, tastytrade]) assert.ok(sim.count() >= 1, `${sim.name} answered through the proxy`);
  assert.equal(proxy.tunnelsTo(HOSTS.dxlink), 1, 'one CONNECT for the one DXLink socket');

  await eventually(() => [...tastytrade.stream.subscriptions()].length >= 2, 'subscribed on DXLink', 20_000);
  const status = (await service.get('/api/system/status')).body;
  assert.deepEqual(status.outboundProxy, { https: proxy.address, http: null, noProxy: [] });
  for (const upstream of status.upstreams) assert.equal(upstream.proxy, proxy.address, upstream.id);
  assert.equal(status.brokerStream.state, 'connected');
  const health = (await service.get('/api/broker/health')).body;
  assert.equal(health.status, 'connected');
  assert.equal(health.proxy, proxy.address);
  assert.ok(
    service.logs.some((l) => l.msg === 'upstream calls go through an outbound proxy' && l.https === proxy.address),
    'the start says which proxy',
  );
});

test('without the inspecting CA, one line names the certificate problem and NODE_EXTRA_CA_CERTS', async (t) => {
  const { proxy } = await providersBehindProxy(t);
  const service = await startServerProcess(t, { ...KEYS, BROKER: 'none', HTTPS_PROXY: proxy.url });
  const quote = await service.get('/api/provider-a/quote?symbol=IBM');
  assert.equal(quote.status, 502);
  assert.equal(quote.body.error.code, 'UPSTREAM_ERROR');
  assert.match(
    quote.body.error.message,
    /^Alpha Vantage: its TLS certificate was refused \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: .+\); .*NODE_EXTRA_CA_CERTS$/,
  );
  // JSON lines are written in blocks, every second.
  const failed = () => service.logs.find((l) => l.msg === 'upstream call failed' && l.failure === 'certificate');
  await eventually(() => failed() !== undefined, 'a log line for the refused certificate', 5_000);
  assert.equal(failed()?.problem, quote.body.error.message);
});

test('a remote IBKR gateway: direct by default, through the proxy (REST and its websocket) once PROXY_ALSO_FOR names it', async (t) => {
  const { ibkr, proxy } = await providersBehindProxy(t);
  const gateway = {
    DATA_MODE: 'live',
    BROKER: 'ibkr',
    IBKR_GATEWAY_URL: `https://${REMOTE_GATEWAY}:5000/v1/api`,
    IBKR_TLS_VERIFY: 'false',
    OVERVIEW_SOURCE: 'none',
    HTTPS_PROXY: proxy.url,
  };
  const direct = await startServerProcess(t, gateway);
  const kept = (await direct.get('/api/broker/health')).body;
  assert.equal(kept.status, 'disconnected', `the name resolves nowhere but at the proxy: ${JSON.stringify(kept)} ${proxy.connects}`);
  assert.equal(kept.proxy, undefined);
  assert.equal(proxy.tunnelsTo(REMOTE_GATEWAY), 0, 'the gateway is kept direct');

  const service = await startServerProcess(t, { ...gateway, PROXY_ALSO_FOR: REMOTE_GATEWAY });
  const health = (await service.get('/api/broker/health')).body;
  assert.equal(health.status, 'connected', health.message);
  assert.equal(health.proxy, proxy.address);
  const quotes = await service.get('/api/broker/quotes?symbols=AAPL,MSFT');
  assert.equal(quotes.status, 200, quotes.text);
  await eventually(() => ibkr.stream.openSockets === 1, 'the IBKR websocket open', 20_000);
  const tunnels = proxy.tunnelsTo(REMOTE_GATEWAY);
  assert.ok(tunnels >= 2, `REST and the websocket each through a CONNECT (${tunnels})`);
  assert.ok(ibkr.stream.accepted >= 1);
});
