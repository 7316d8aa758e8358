// Starts the sandbox upstreams and the service on loopback port 0, and closes both when the test ends.
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { request } from 'undici';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { type Sandbox, type SandboxOptions, sandboxConfig, sandboxOptionsFor, startSandbox } from '../../src/sandbox/index.js';
import { testConfig } from './config.js';

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
  get(path: string, headers?: Record<string, string>, method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE'): Promise<TestResponse>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Adjust the sandbox-pointed config before the app is built (e.g. aim an upstream at a dead port). */
  configure?: (config: Config) => Config;
  logger?: Logger;
  /** Simulator options; by default the simulated plan matches the configured budget. */
  sandbox?: SandboxOptions;
}

export async function startSandboxOnly(t: TestContext, options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  t.after(() => sandbox.close());
  return sandbox;
}

export async function startApp(t: TestContext, options: StartOptions = {}): Promise<RunningApp> {
  const base = testConfig(t, options.env);
  const sandbox = await startSandboxOnly(t, options.sandbox ?? sandboxOptionsFor(base));
  let config = sandboxConfig(base, sandbox);
  if (options.configure) config = options.configure(config);
  const app = await buildApp(config, { logger: options.logger ?? pino({ level: 'silent' }) });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  return { app, sandbox, config, url, get: (path, headers = {}, method = 'GET') => httpGet(url + path, headers, method) };
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
