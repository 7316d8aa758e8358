// Every test that starts the service through startApp is a secret scan (test/helpers/app.ts). Here: the
// scan itself can fail, and the real entry point (src/server.ts, production logger at debug level) run
// as its own process against the simulators prints no key, secret or access token, whatever is asked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { SANDBOX_CREDENTIALS } from '../../../src/sandbox/index.js';
import { httpGet, startApp, startSandboxOnly } from '../../helpers/app.js';
import { tempDir } from '../../helpers/config.js';

test('the scan finds a key in a log line or a response, and an issued access token', async (t) => {
  const running = await startApp(t, { env: { BROKER: 'tastytrade' } });
  assert.equal((await running.get('/api/broker/accounts')).status, 200);
  const token = running.sandbox.tastytrade.lastToken;
  assert.ok(token !== undefined, 'the simulator issued a token');
  assert.ok(running.scan.lines.length > 0, 'log lines are captured');
  assert.deepEqual(running.scan.leaks(), []);

  running.scan.lines.push(`{"msg":"oops","url":"/query?apikey=${SANDBOX_CREDENTIALS.alphaVantageKey}"}`);
  running.scan.responses.push(`200 {}\n{"token":"${token}"}`);
  assert.equal(running.scan.leaks().length, 2);
  // Undo the planted leaks so this test's own teardown scan passes.
  running.scan.lines.pop();
  running.scan.responses.pop();
});

const METRICS_TOKEN = 'metrics-token-in-the-secret-scan';

test('src/server.ts as a process: nothing it prints holds a configured secret or an issued token', async (t) => {
  const sandbox = await startSandboxOnly(t, { alphaVantage: { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0 } });
  const tokens = new Set<string>();
  sandbox.tastytrade.on('request', () => sandbox.tastytrade.lastToken && tokens.add(sandbox.tastytrade.lastToken));
  const env = {
    PATH: process.env.PATH ?? '',
    DATA_MODE: 'live',
    LOG_LEVEL: 'debug',
    PORT: '0',
    METRICS_PORT: '0',
    METRICS_TOKEN,
    STATE_DIR: tempDir(t),
    RATE_LIMIT_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '0',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    MASSIVE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_URL: `${sandbox.alphaVantage.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    MASSIVE_URL: sandbox.massive.origin,
    MASSIVE_API_KEY: SANDBOX_CREDENTIALS.massiveKey,
    YAHOO_URL: sandbox.yahoo.origin,
    BROKER: 'tastytrade',
    TASTYTRADE_URL: sandbox.tastytrade.origin,
    TASTYTRADE_CLIENT_SECRET: SANDBOX_CREDENTIALS.tastytradeClientSecret,
    TASTYTRADE_REFRESH_TOKEN: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const printed: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => printed.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${printed.join('\n')}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      printed.push(line);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(line);
      if (match?.[1] && line.includes('market data proxy started')) resolve(match[1]);
    });
  });

  const paths = [
    '/api/provider-a/quote?symbol=IBM',
    '/api/provider-a/technical?symbol=IBM&indicator=MACD&interval=60min',
    '/api/provider-a/quote?symbol=IBM&apikey=evil',
    '/api/provider-b/dividends?symbol=AAPL&limit=2',
    '/api/provider-b/dividends?cursor=eyJ2IjoxLCJzIjpudWxsLCJsIjoxLCJjIjoiYWJjIn0',
    '/api/market/overview',
    '/api/broker/health',
    '/api/broker/accounts',
    '/api/broker/positions',
    '/api/broker/quotes?symbols=AAPL,SPY,BTC-USD,^VIX',
    '/api/system/status',
    '/api/openapi.json',
    '/metrics',
  ];
  const answers: string[] = [];
  for (const path of paths) {
    // /metrics is served on the public port to a bearer of METRICS_TOKEN: the token is a secret like the keys.
    const res = await httpGet(url + path, { authorization: `Bearer ${METRICS_TOKEN}` });
    assert.ok(res.status < 500, `${path} -> ${res.status} ${res.text.slice(0, 200)}`);
    if (path === '/metrics') assert.equal(res.status, 200, 'metrics for the bearer of the token');
    answers.push(`${JSON.stringify(res.headers)}\n${res.text}`);
  }
  // An upstream that rejects the key makes the adapters log and classify its error bodies too.
  sandbox.massive.setFaults({ fault: 'http5xx', status: 401 });
  answers.push((await httpGet(`${url}/api/provider-b/dividends?symbol=MSFT`)).text);
  sandbox.massive.clearFaults();
  sandbox.tastytrade.expireTokens();
  answers.push((await httpGet(`${url}/api/broker/quotes?symbols=MSFT`)).text);

  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;

  assert.ok(tokens.size >= 1, 'the service obtained access tokens');
  assert.ok(printed.length >= paths.length, `the service logged (${printed.length} lines)`);
  const secrets = [...Object.values(SANDBOX_CREDENTIALS), ...tokens, METRICS_TOKEN];
  for (const text of [...printed, ...answers]) {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret.slice(0, 4)}… in: ${text.slice(0, 300)}`);
  }
});
