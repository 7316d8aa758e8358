// The outbound proxy's rules and failures, with the service in this process against the sandbox's simulators
// (plain HTTP on 127.0.0.1, so HTTP_PROXY is the proxy that applies, and HTTPS_PROXY's fallback to it
// carries the IBKR gateway's https:// calls). Loopback is direct unless PROXY_ALSO_FOR names it, which these
// tests do where they want the proxy to see the calls. Every app is also a secret scan (helpers/app.ts): the
// proxy's password, raw, decoded or as its Basic header, in no log line and no response.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { startApp } from '../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../helpers/config.js';
import { type ForwardProxy, startForwardProxy } from '../helpers/forward-proxy.js';
import { eventually } from '../stream/sse-client.js';
import { freePort } from '../store/redis-topology.js';

const port = (url: string) => new URL(url).port;

function tunnelsTo(proxy: ForwardProxy, url: string): number {
  return proxy.connects.filter((c) => c === `127.0.0.1:${port(url)}`).length;
}

test('loopback upstreams are direct with HTTP_PROXY set; PROXY_ALSO_FOR=127.0.0.1 sends them through, NO_PROXY keeps the ones it names direct', async (t) => {
  const proxy = await startForwardProxy(t);
  const kept = await startApp(t, { env: { ...UNCAPPED, HTTP_PROXY: proxy.url } });
  assert.equal((await kept.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  assert.deepEqual(proxy.connects, [], 'loopback stays direct');
  const status = (await kept.get('/api/system/status')).body;
  assert.deepEqual(status.outboundProxy, { https: proxy.address, http: proxy.address, noProxy: [] });
  assert.ok(
    status.upstreams.every((u: { proxy: string | null }) => u.proxy === null),
    'each upstream says it is direct',
  );

  const named = await startApp(t, {
    env: { ...UNCAPPED, HTTP_PROXY: proxy.url, PROXY_ALSO_FOR: '127.0.0.1' },
    // NO_PROXY as host:port (the form that needs the simulator's port, known once it listens) wins over PROXY_ALSO_FOR.
    configure: (config) => ({ ...config, proxy: { ...config.proxy, noProxy: [`127.0.0.1:${port(config.massive.url)}`] } }),
  });
  assert.equal((await named.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  assert.equal((await named.get('/api/provider-b/dividends?symbol=AAPL')).status, 200);
  assert.equal((await named.get('/api/market/overview')).status, 200);
  assert.equal((await named.get('/api/broker/health')).body.proxy, proxy.address, 'the IBKR gateway too, named by its address');
  assert.ok(tunnelsTo(proxy, named.config.alphaVantage.url) >= 1);
  assert.ok(tunnelsTo(proxy, named.config.overview.url) >= 1);
  assert.ok(tunnelsTo(proxy, named.config.broker.ibkr.url) >= 1);
  assert.equal(tunnelsTo(proxy, named.config.massive.url), 0, 'NO_PROXY host:port is direct');
  assert.equal(named.sandbox.massive.count('/v3/reference/dividends'), 1, 'and answered');
  const upstreams = (await named.get('/api/system/status')).body.upstreams as { id: string; proxy: string | null }[];
  assert.deepEqual(Object.fromEntries(upstreams.map((u) => [u.id, u.proxy])), {
    'provider-a': proxy.address,
    'provider-b': null,
    overview: proxy.address,
    broker: proxy.address,
  });
});

test('Basic credentials in HTTP_PROXY open every tunnel, the DXLink socket included; wrong ones give 502 naming the proxy, the password nowhere', async (t) => {
  const credentials = { user: 'mdp', password: 'p@ss w0rd:1' };
  const proxy = await startForwardProxy(t, { credentials });
  const env = { ...UNCAPPED, ...NO_FALLBACK, BROKER: 'tastytrade', PROXY_ALSO_FOR: '127.0.0.1' };
  const good = await startApp(t, { env: { ...env, HTTP_PROXY: proxy.url }, sandbox: { tastytrade: { sessionAt: () => 'regular' } } });
  assert.equal((await good.get('/api/provider-a/quote?symbol=IBM')).status, 200);
  assert.equal((await good.get('/api/broker/quotes?symbols=AAPL')).status, 200);
  await eventually(() => good.sandbox.tastytrade.stream.openSockets === 1, 'the DXLink socket open through the proxy', 20_000);
  const tastytrade = tunnelsTo(proxy, good.config.broker.tastytrade.url);
  assert.ok(tastytrade >= 2, `REST and DXLink, one origin, each through a CONNECT (${tastytrade})`);

  const wrong = proxy.url.replace(encodeURIComponent(credentials.password), 'not-it');
  const refused = await startApp(t, {
    env: { ...env, HTTP_PROXY: wrong },
    sandbox: { tastytrade: { sessionAt: () => 'regular' } },
    deps: { broker: { tastytradeStream: { backOffMs: { first: 50, max: 100 } } } },
  });
  const answer = await refused.get('/api/provider-a/quote?symbol=MSFT');
  assert.equal(answer.status, 502);
  assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
  assert.equal(
    answer.body.error.message,
    `Alpha Vantage was not reached: the outbound proxy ${proxy.address} (HTTP_PROXY) refused the user name and password in HTTP_PROXY (HTTP 407)`,
  );
  const broker = await refused.get('/api/broker/accounts');
  assert.equal(broker.status, 503);
  assert.equal(broker.body.error.code, 'BROKER_UNAVAILABLE');
  assert.match(broker.body.error.message, new RegExp(`outbound proxy ${proxy.address} \\(HTTP_PROXY\\) refused the user name`));
  const status = (await refused.get('/api/system/status')).body;
  const providerA = status.upstreams.find((u: { id: string }) => u.id === 'provider-a');
  assert.match(providerA.lastError.message, /outbound proxy .* refused the user name and password/);
  const metrics = await refused.scrape();
  for (const text of [JSON.stringify(status), metrics.text, answer.text, broker.text])
    for (const secret of [credentials.password, encodeURIComponent(credentials.password), 'not-it']) assert.ok(!text.includes(secret));
});

test('a proxy that refuses the destination (403) or cannot be reached: JSON errors naming it, 502 for providers, 503 for the broker', async (t) => {
  const proxy = await startForwardProxy(t, { deny: ['127.0.0.1'] });
  const env = { ...UNCAPPED, ...NO_FALLBACK, PROXY_ALSO_FOR: '127.0.0.1' };
  const denied = await startApp(t, {
    env: { ...env, HTTP_PROXY: proxy.url },
    sandbox: { ibkr: { sessionAt: () => 'regular' } },
    deps: { broker: { ibkrStream: { backOffMs: { first: 50, max: 100 } } } },
  });
  const quote = await denied.get('/api/provider-a/quote?symbol=IBM');
  assert.equal(quote.status, 502);
  assert.equal(
    quote.body.error.message,
    `Alpha Vantage was not reached: the outbound proxy ${proxy.address} (HTTP_PROXY) refused the connection (HTTP 403): its rules do not allow this destination`,
  );
  const accounts = await denied.get('/api/broker/accounts');
  assert.equal(accounts.status, 503);
  assert.match(accounts.body.error.message, /the outbound proxy .* refused the connection \(HTTP 403\)/);
  const health = (await denied.get('/api/broker/health')).body;
  assert.equal(health.status, 'disconnected');
  assert.match(health.message, /outbound proxy .* \(HTTP 403\)/);
  assert.equal(health.proxy, proxy.address);
  assert.equal(denied.sandbox.alphaVantage.count(), 0, 'nothing reached the provider');
  // Once the failures open the circuit, the paused calls still say what to fix.
  let paused = quote;
  for (let i = 0; i < 8 && !/paused/.test(paused.body.error.message); i += 1) paused = await denied.get('/api/provider-a/quote?symbol=IBM');
  assert.match(
    paused.body.error.message,
    new RegExp(`calls are paused until it recovers: .*the outbound proxy ${proxy.address} .*\\(HTTP 403\\)`),
  );

  const closed = await freePort();
  const gone = await startApp(t, { env: { ...env, HTTP_PROXY: `http://user:secret-pw@127.0.0.1:${closed}` } });
  const unreachable = await gone.get('/api/provider-a/quote?symbol=IBM');
  assert.equal(unreachable.status, 502);
  assert.equal(
    unreachable.body.error.message,
    `Alpha Vantage was not reached: the outbound proxy 127.0.0.1:${closed} (HTTP_PROXY) is unreachable (ECONNREFUSED: nothing answers there): check HTTP_PROXY`,
  );
  assert.ok(!unreachable.text.includes('secret-pw'));
});

test('budget and pacing hold through the proxy: 0 violations of the plan at the provider, every call tunnelled', async (t) => {
  const proxy = await startForwardProxy(t);
  const running = await startApp(t, {
    env: { ...NO_FALLBACK, HTTP_PROXY: proxy.url, PROXY_ALSO_FOR: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '0' },
  });
  const arrivals: number[] = [];
  // Stamped as each call arrives, where the provider judges: the first call's tunnel (CONNECT) is set up
  // before it arrives, the next one reuses it, so their gap at arrival is the spacing less the tunnel's cost.
  running.sandbox.alphaVantage.on('arrival', () => arrivals.push(Date.now()));
  const symbols = UNIVERSE.filter((i) => i.kind === 'stock')
    .slice(0, 24)
    .map((i) => i.symbol);
  const answers = await Promise.all(symbols.map((s) => running.get(`/api/provider-a/quote?symbol=${s}`)));
  assert.ok(
    answers.every((a) => a.status === 200 || a.status === 429),
    JSON.stringify(answers.map((a) => a.status)),
  );
  const { minIntervalMs, callsPerMinute } = running.config.alphaVantage;
  // Callers wait for a slot a few seconds at most (MAX_PACING_WAIT_MS): the rest are refused with 429.
  assert.ok(arrivals.length >= 2 && arrivals.length <= callsPerMinute, `${arrivals.length} calls`);
  const gaps = arrivals.slice(1).map((at, i) => at - (arrivals[i] as number));
  t.diagnostic(`gaps at arrival: ${gaps.join(', ')} ms`);
  // The provider's rule is one call a second; the service spaces them minIntervalMs apart (1.2 s).
  assert.ok(
    gaps.every((gap) => gap >= 1_000),
    `gaps at arrival ${gaps.join(', ')} ms (spacing ${minIntervalMs} ms)`,
  );
  assert.equal(answers.filter((a) => a.status === 200).length, arrivals.length, 'one answer per call, the rest refused');
  assert.ok(tunnelsTo(proxy, running.config.alphaVantage.url) >= 1);
  assert.deepEqual(new Set(proxy.connects), new Set([`127.0.0.1:${port(running.config.alphaVantage.url)}`]));
});
