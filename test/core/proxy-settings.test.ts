// The proxy variables as the environment gives them, the route each target takes, and what is shown of a
// proxy (host and port) against what only the agents get (the URL with its credentials).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/core/config.js';
import { gatewayHosts, OutboundRoutes } from '../../src/core/outbound-routes.js';
import { proxySecrets, proxySettings } from '../../src/core/proxy-settings.js';
import { secretsOf } from '../../src/log/logger.js';

const settings = (env: Record<string, string>) => {
  const problems: string[] = [];
  const read = proxySettings(env, problems);
  return { read, problems };
};

test('lower case wins over upper case, as in curl and undici; HTTPS_PROXY falls back to HTTP_PROXY, not the reverse', () => {
  const { read } = settings({ HTTPS_PROXY: 'http://upper:3128', https_proxy: 'http://lower:3128', HTTP_PROXY: 'http://plain:8080' });
  assert.equal(read.https?.address, 'lower:3128');
  assert.equal(read.https?.variable, 'https_proxy');
  assert.equal(read.http?.address, 'plain:8080');
  const fallback = settings({ HTTP_PROXY: 'http://plain:8080' }).read;
  assert.equal(fallback.https?.address, 'plain:8080');
  assert.equal(fallback.https?.variable, 'HTTP_PROXY');
  assert.equal(settings({ HTTPS_PROXY: 'http://only:3128' }).read.http, undefined);
  assert.deepEqual(settings({ no_proxy: 'a.example', NO_PROXY: 'b.example' }).read.noProxy, ['a.example']);
});

test('a proxy URL: default ports, no scheme read as http://, credentials kept for the agents and never in the address', () => {
  const { read } = settings({ HTTPS_PROXY: 'http://us%40er:p%3Ass@proxy.example.com:3128', HTTP_PROXY: 'proxy.example.com' });
  assert.equal(read.https?.address, 'proxy.example.com:3128');
  assert.equal(read.https?.credentials, true);
  assert.equal(read.https?.url, 'http://us%40er:p%3Ass@proxy.example.com:3128/');
  assert.equal(read.http?.address, 'proxy.example.com:80');
  assert.equal(read.http?.url, 'http://proxy.example.com/');
  assert.equal(settings({ HTTPS_PROXY: 'https://tls-proxy.example.com' }).read.https?.address, 'tls-proxy.example.com:443');
  assert.deepEqual(proxySecrets(read.https), ['p%3Ass', 'p:ss', Buffer.from('us@er:p:ss').toString('base64')]);
});

test('a wrong proxy setting is one line that never repeats the password', () => {
  const { problems } = settings({
    HTTPS_PROXY: 'socks5://user:hunter22@proxy:1080',
    HTTP_PROXY: 'http://user:hunter22@proxy:3128/some/path',
    NO_PROXY: '10.0.0.0/40',
    PROXY_ALSO_FOR: 'http://gateway',
  });
  assert.equal(problems.length, 4, problems.join('\n'));
  assert.match(problems[0] as string, /^HTTP_PROXY must name the proxy only/);
  assert.match(problems[1] as string, /^HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy .*SOCKS proxies are not supported$/);
  assert.match(problems[2] as string, /^NO_PROXY: "10.0.0.0\/40" is not an address range: the prefix length goes up to 32$/);
  assert.match(problems[3] as string, /^PROXY_ALSO_FOR: "http:\/\/gateway" is not a host name/);
  for (const problem of problems) assert.ok(!problem.includes('hunter22'), problem);
  assert.throws(
    () => loadConfig({ HTTPS_PROXY: 'ftp://u:hunter22@p:21' }),
    (error: Error) => !error.message.includes('hunter22'),
  );
});

test('routes: the scheme picks the proxy; loopback and the IBKR gateway direct unless PROXY_ALSO_FOR names them; NO_PROXY wins', () => {
  const proxy = { https: 'http://secure-proxy:3128', http: 'http://plain-proxy:3128' };
  const base = settings({ HTTPS_PROXY: proxy.https, HTTP_PROXY: proxy.http }).read;
  const routes = new OutboundRoutes(base, gatewayHosts('ibkr', 'https://gw.lan:5000/v1/api'));
  const via = (url: string) => routes.proxyFor(url)?.address ?? 'direct';
  assert.equal(via('https://www.alphavantage.co/query'), 'secure-proxy:3128');
  assert.equal(via('wss://tasty-openapi-ws.dxfeed.com/realtime'), 'secure-proxy:3128');
  assert.equal(via('http://api.example.com/'), 'plain-proxy:3128');
  assert.equal(via('ws://api.example.com/'), 'plain-proxy:3128');
  for (const local of [
    'https://localhost:5000/v1/api',
    'https://127.0.0.1:5000/',
    'wss://127.9.9.9/',
    'https://[::1]:5000/',
    'https://gw.lan:5000/v1/api',
    'wss://gw.lan:5000/v1/api/ws',
  ])
    assert.equal(via(local), 'direct', local);

  const named = new OutboundRoutes(
    settings({ HTTPS_PROXY: proxy.https, PROXY_ALSO_FOR: 'gw.lan,127.0.0.1', NO_PROXY: '127.0.0.1:9000,.example.org' }).read,
    gatewayHosts('ibkr', 'https://gw.lan:5000/v1/api'),
  );
  assert.equal(named.proxyFor('https://gw.lan:5000/v1/api')?.address, 'secure-proxy:3128');
  assert.equal(named.proxyFor('https://127.0.0.1:5000/')?.address, 'secure-proxy:3128');
  assert.equal(named.proxyFor('https://127.0.0.1:9000/'), undefined, 'NO_PROXY wins over PROXY_ALSO_FOR');
  assert.equal(named.proxyFor('https://localhost:5000/'), undefined, 'only what is named');
  assert.equal(named.proxyFor('https://api.example.org/'), undefined);
  assert.equal(gatewayHosts('tastytrade', 'https://gw.lan:5000/v1/api').length, 0);
  assert.equal(OutboundRoutes.DIRECT.proxyFor('https://www.alphavantage.co/'), undefined);
});

test('configuration: provider A is spaced 1.5 s by default when its calls go through a proxy, 1.2 s directly; a set value wins', () => {
  assert.equal(loadConfig({}).alphaVantage.minIntervalMs, 1_200);
  assert.equal(loadConfig({ HTTPS_PROXY: 'http://proxy:3128' }).alphaVantage.minIntervalMs, 1_500);
  assert.equal(loadConfig({ HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: 'alphavantage.co' }).alphaVantage.minIntervalMs, 1_200);
  assert.equal(loadConfig({ HTTPS_PROXY: 'http://proxy:3128', ALPHA_VANTAGE_MIN_INTERVAL_MS: '1100' }).alphaVantage.minIntervalMs, 1_100);
  const config = loadConfig({ HTTPS_PROXY: 'http://mdp:s3cret-pass@proxy:3128' });
  assert.ok(secretsOf(config).includes('s3cret-pass'), 'the log scrub knows the proxy password');
});
