// Starts the sandbox upstreams and the service on loopback port 0, and closes both when the test ends.
// Every answer `get` receives is held to the OpenAPI document (contract.ts): a mismatch fails the test.
import { appendFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { request } from 'undici';
import { buildApp } from '../../src/app.js';
import { type CreateDepsOptions, createDeps } from '../../src/deps.js';
import type { Config } from '../../src/core/config.js';
import { REDACT_PATHS, secretsOf } from '../../src/log/logger.js';
import {
  SANDBOX_CREDENTIALS,
  type Sandbox,
  type SandboxOptions,
  sandboxConfig,
  sandboxOptionsFor,
  startSandbox,
} from '../../src/sandbox/index.js';
import type { SimRequestEvent } from '../../src/sandbox/simulated-upstream.js';
import { testConfig } from './config.js';
import { Contract, type Document } from './contract.js';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface RunningApp {
  app: FastifyInstance;
  sandbox: Sandbox;
  config: Config;
  url: string;
  /** Every log line (unless the test passed its own logger) and response; checked for secrets at teardown. */
  scan: SecretScan;
  get(path: string, headers?: Record<string, string>, method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE'): Promise<TestResponse>;
  /** The metrics listener's scrape URL (METRICS_PORT), when it runs. */
  metricsUrl: string | undefined;
  /** Scrapes the metrics listener. */
  scrape(headers?: Record<string, string>): Promise<TestResponse>;
  /** The published OpenAPI document as a checker, for tests that send requests with a client of their own. */
  contract: Contract;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Adjust the sandbox-pointed config before the app is built (e.g. aim an upstream at a dead port). */
  configure?: (config: Config) => Config;
  logger?: Logger;
  /** Simulator options; by default the simulated plan matches the configured budget. */
  sandbox?: SandboxOptions;
  /**
   * How `get` reaches the app: `inject` (Fastify's, no socket) for tests about logic, `socket` (HTTP over
   * loopback) where the socket matters: the hot path answers from the server's listener, before Fastify.
   * The app listens either way, for tests that open their own connections.
   */
  transport?: 'inject' | 'socket';
  /** Options of the composition root (timings tests shorten: the broker stream's retention, its heartbeat watch). */
  deps?: CreateDepsOptions;
}

export async function startSandboxOnly(t: TestContext, options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  t.after(() => sandbox.close());
  return sandbox;
}

export async function startApp(t: TestContext, options: StartOptions = {}): Promise<RunningApp> {
  const base = testConfig(t, options.env);
  // The simulated plan matches the configured budget unless the test sets its own.
  const sandbox = await startSandboxOnly(t, { ...sandboxOptionsFor(base), ...options.sandbox });
  let config = sandboxConfig(base, sandbox);
  if (options.configure) config = options.configure(config);
  const scan = new SecretScan(config, sandbox);
  const logger = options.logger ?? scan.logger();
  const app = await buildApp(config, {
    logger,
    deps: options.deps === undefined ? undefined : await createDeps(config, logger, options.deps),
  });
  t.after(() => app.close());
  // After-hooks run in the order they were added: this one sees the lines written while closing.
  t.after(() => scan.assertClean());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const metricsUrl = await app.metricsListener.listen();
  const contract = new Contract(app.swagger() as unknown as Document);
  const ask =
    options.transport === 'socket'
      ? (path: string, headers: Record<string, string>, method: string) => httpGet(url + path, headers, method)
      : injected(app);
  const get: RunningApp['get'] = async (path, headers = {}, method = 'GET') => {
    const res = scan.response(await ask(path, headers, method));
    contract.assert(method, path, res);
    return res;
  };
  const scrape: RunningApp['scrape'] = async (headers = {}) => {
    if (metricsUrl === undefined) throw new Error('no metrics listener (METRICS_PORT=off)');
    return scan.response(await httpGet(metricsUrl, headers));
  };
  return { app, sandbox, config, url, scan, get, metricsUrl, scrape, contract };
}

function injected(app: FastifyInstance) {
  return async (path: string, headers: Record<string, string>, method: string): Promise<TestResponse> => {
    const res = await app.inject({ method: method as 'GET', url: path, headers });
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    // As a socket delivers them: every header value a string.
    const strings = Object.fromEntries(
      Object.entries(res.headers).map(([name, value]) => [name, typeof value === 'number' ? String(value) : value]),
    );
    return { status: res.statusCode, headers: strings, body, text: res.body };
  };
}

export async function httpGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> {
  const res = await request(url, { method: method as 'GET', headers });
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, text };
}

/** Lines and responses scanned in this process; appended to $SECRET_SCAN_TALLY (if set) at exit. */
const tally = { apps: 0, lines: 0, responses: 0 };
if (process.env.SECRET_SCAN_TALLY) {
  const file = process.env.SECRET_SCAN_TALLY;
  process.once('exit', () => appendFileSync(file, `${JSON.stringify(tally)}\n`));
}

/**
 * Makes every test that starts the service a secret scan: the configured keys, the sandbox credentials
 * and every Tastytrade access token the simulator issued must appear in no log line and no response.
 * The logger redacts by field path like the service's, but without its last-resort value filter, so a
 * key that reaches the logger at all is caught here rather than masked.
 */
class SecretScan {
  readonly lines: string[] = [];
  readonly responses: string[] = [];
  private readonly secrets: Set<string>;

  constructor(config: Config, sandbox: Sandbox) {
    this.secrets = new Set([...secretsOf(config), ...Object.values(SANDBOX_CREDENTIALS)]);
    const tastytrade = sandbox.tastytrade;
    tastytrade.on('request', (event: SimRequestEvent) => {
      if (event.path === '/oauth/token' && tastytrade.lastToken !== undefined) this.secrets.add(tastytrade.lastToken);
      if (event.path === '/api-quote-tokens') for (const token of tastytrade.stream.issuedTokens()) this.secrets.add(token);
    });
  }

  logger(): Logger {
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        this.lines.push(chunk.toString('utf8'));
        callback();
      },
    });
    return pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, sink);
  }

  response(res: TestResponse): TestResponse {
    this.responses.push(`${res.status} ${JSON.stringify(res.headers)}\n${res.text}`);
    return res;
  }

  /** Every text that holds a secret, with the secret's first characters only. */
  leaks(): string[] {
    const found: string[] = [];
    for (const text of [...this.lines, ...this.responses]) {
      for (const secret of this.secrets) if (text.includes(secret)) found.push(`${secret.slice(0, 4)}… in: ${text.slice(0, 300)}`);
    }
    return found;
  }

  assertClean(): void {
    tally.apps += 1;
    tally.lines += this.lines.length;
    tally.responses += this.responses.length;
    const leaks = this.leaks();
    if (leaks.length > 0) throw new Error(`secret scan: ${leaks.length} leak(s)\n${leaks.slice(0, 5).join('\n')}`);
  }
}
