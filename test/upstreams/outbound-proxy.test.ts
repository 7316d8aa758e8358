// Live mode through a real forward proxy (test/helpers/forward-proxy.ts), the service in its own process with
// exactly the settings a user gives. The providers keep their real host names (the defaults of
// ALPHA_VANTAGE_URL, MASSIVE_URL, YAHOO_URL, TASTYTRADE_URL, and the DXLink address a quote token names):
// they resolve at the proxy alone, to the simulators behind a TLS-inspecting end whose certificates a
// private CA signs. So no call can reach a simulator except through the proxy, and the loopback rule (which
// keeps 127.0.0.1 direct) is not what is tested here: these targets are not loopback to the service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOSTS, KEYS, providersBehindProxy, REMOTE_GATEWAY } from '../helpers/providers-behind-proxy.js';
import { startServerProcess } from '../helpers/server-process.js';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { eventually } from '../stream/sse-client.js';

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

test('a proxy whose rules refuse the DXLink host: the feed names the proxy and the refusal, snapshots answer meanwhile', async (t) => {
  const { tastytrade, proxy, ca } = await providersBehindProxy(t, { deny: [HOSTS.dxlink] });
  const service = await startServerProcess(t, { ...KEYS, BROKER: 'tastytrade', HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: ca.caFile });
  const quotes = await service.get('/api/broker/quotes?symbols=AAPL');
  assert.equal(quotes.status, 200, quotes.text);
  assert.equal(quotes.headers['x-data-source'], 'broker-snapshot');
  await eventually(() => proxy.tunnelsTo(HOSTS.dxlink) >= 1, 'a CONNECT for DXLink', 20_000);
  let stream: { lastError: string | null } = { lastError: null };
  for (let i = 0; i < 100 && stream.lastError === null; i += 1) {
    stream = (await service.get('/api/system/status')).body.brokerStream;
    if (stream.lastError === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(
    stream.lastError,
    `the DXLink websocket was not opened: the outbound proxy ${proxy.address} (HTTPS_PROXY) refused the connection (HTTP 403): its rules do not allow this destination`,
  );
  assert.equal(tastytrade.stream.openSockets, 0);
});

test("NO_PROXY naming a provider's domain: its calls are direct (here they cannot resolve), the others still tunnel", async (t) => {
  const { proxy, ca } = await providersBehindProxy(t);
  const service = await startServerProcess(t, {
    ...KEYS,
    BROKER: 'none',
    HTTPS_PROXY: proxy.url,
    NO_PROXY: 'localhost, .massive.com,10.0.0.0/8',
    NODE_EXTRA_CA_CERTS: ca.caFile,
  });
  assert.equal((await service.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  const dividends = await service.get('/api/provider-b/dividends?symbol=AAPL');
  assert.equal(dividends.status, 502);
  assert.equal(dividends.body.error.message, 'Massive is unreachable', 'a direct failure: no proxy named');
  assert.equal(proxy.tunnelsTo(HOSTS.massive), 0);
  assert.ok(proxy.tunnelsTo(HOSTS.alphaVantage) >= 1);
  const status = (await service.get('/api/system/status')).body;
  assert.deepEqual(status.outboundProxy.noProxy, ['localhost', '.massive.com', '10.0.0.0/8']);
  assert.equal(status.upstreams.find((u: { id: string }) => u.id === 'provider-b').proxy, null);
});

test('budget and pacing hold through the proxy and the inspecting end: 0 violations of the plan at the provider', async (t) => {
  const { alphaVantage, proxy, ca } = await providersBehindProxy(t);
  const arrivals: number[] = [];
  // Stamped as each call arrives, where the provider judges its plan (5 a minute, 1 a second).
  alphaVantage.on('arrival', () => arrivals.push(Date.now()));
  const service = await startServerProcess(t, {
    ...KEYS,
    BROKER: 'none',
    QUOTE_FALLBACK: 'none',
    RATE_LIMIT_PER_MINUTE: '0',
    HTTPS_PROXY: proxy.url,
    NODE_EXTRA_CA_CERTS: ca.caFile,
  });
  const symbols = UNIVERSE.filter((i) => i.kind === 'stock')
    .slice(0, 24)
    .map((i) => i.symbol);
  const answers = await Promise.all(symbols.map((s) => service.get(`/api/provider-a/quote?symbol=${s}`)));
  const gaps = arrivals.slice(1).map((at, i) => at - (arrivals[i] as number));
  t.diagnostic(`gaps at arrival: ${gaps.join(', ')} ms`);
  assert.ok(arrivals.length >= 2 && arrivals.length <= 5, `${arrivals.length} calls`);
  assert.ok(
    gaps.every((gap) => gap >= 1_000),
    `gaps at arrival ${gaps.join(', ')} ms`,
  );
  assert.equal(answers.filter((a) => a.status === 200).length, arrivals.length, 'one answer per call, none refused by the provider');
  assert.ok(answers.every((a) => a.status === 200 || (a.status === 429 && a.body.error.code === 'QUOTA_EXHAUSTED')));
  assert.ok(proxy.tunnelsTo(HOSTS.alphaVantage) >= 1);
});
