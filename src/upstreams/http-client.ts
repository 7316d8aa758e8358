// One keep-alive client per upstream: a deadline on every call, a cap on body size, and log lines that
// carry the path only (never the query string, where keys travel).
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { type TransportFailure, UpstreamTransportError } from '../core/errors.js';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json: unknown;
  text: string;
}

export interface UpstreamRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  timeoutMs?: number;
}

export interface HttpClientOptions {
  /** Human name used in logs and error messages, e.g. "Alpha Vantage". */
  name: string;
  timeoutMs: number;
  logger: Logger;
  maxBodyBytes?: number;
  /** Skip TLS verification (the IBKR gateway's self-signed certificate); applies to this client only. */
  insecureTls?: boolean;
  connections?: number;
}

const DEFAULT_MAX_BODY = 8 * 1024 * 1024;

export class HttpClient {
  readonly name: string;
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly logger: Logger;

  constructor(options: HttpClientOptions) {
    this.name = options.name;
    this.timeoutMs = options.timeoutMs;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    this.logger = options.logger;
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: options.connections ?? 16,
      connect: options.insecureTls ? { rejectUnauthorized: false } : {},
    });
  }

  async request(url: URL | string, options: UpstreamRequestOptions = {}): Promise<UpstreamResponse> {
    const target = typeof url === 'string' ? new URL(url) : url;
    const method = options.method ?? 'GET';
    const started = performance.now();
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    try {
      const res = await request(target, {
        method,
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
      });
      const text = await this.readCapped(res.body);
      this.logger.debug(
        { upstream: this.name, method, path: target.pathname, status: res.statusCode, ms: elapsed(started) },
        'upstream call',
      );
      return { status: res.statusCode, headers: res.headers, json: parseJson(text), text };
    } catch (error) {
      const failure = classify(error);
      this.logger.warn({ upstream: this.name, method, path: target.pathname, failure, ms: elapsed(started) }, 'upstream call failed');
      throw new UpstreamTransportError(this.name, failure, error);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > this.maxBodyBytes) {
        body.destroy();
        throw new BodyTooLargeError();
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

class BodyTooLargeError extends Error {}

function classify(error: unknown): TransportFailure {
  if (error instanceof BodyTooLargeError) return 'too_large';
  const name = (error as { name?: string }).name;
  if (
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError
  ) {
    return 'timeout';
  }
  if (error instanceof undiciErrors.ConnectTimeoutError) return 'timeout';
  const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') return 'unreachable';
  return 'reset';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
