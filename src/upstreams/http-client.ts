// One keep-alive client per upstream: a deadline on every call, a cap on body size, and log lines that
// carry the path only (never the query string, where keys travel). A call goes through the outbound proxy
// it is given names for its origin (outbound-proxy.ts), on a ProxyAgent with this client's own options,
// or directly; a failure says which.
import { Agent, errors as undiciErrors, ProxyAgent, request, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { type TransportFailure, UpstreamTransportError } from '../core/errors.js';
import type { ProxyEndpoint } from '../core/proxy-settings.js';
import { certificateRefused, OutboundProxy, refusal, unreachable } from './outbound-proxy.js';

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
  /** Which proxy, if any, each origin is reached through; direct when not given. */
  outbound?: OutboundProxy;
}

const DEFAULT_MAX_BODY = 8 * 1024 * 1024;

const KEEP_ALIVE_MS = 30_000;

export class HttpClient {
  readonly name: string;
  private readonly agent: Agent;
  /** One per proxy this client's calls went through, made on first use. */
  private readonly proxied = new Map<string, ProxyAgent>();
  private readonly options: HttpClientOptions;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly logger: Logger;
  private readonly outbound: OutboundProxy;

  constructor(options: HttpClientOptions) {
    this.name = options.name;
    this.options = options;
    this.timeoutMs = options.timeoutMs;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    this.logger = options.logger;
    this.outbound = options.outbound ?? OutboundProxy.DIRECT;
    this.agent = new Agent({
      keepAliveTimeout: KEEP_ALIVE_MS,
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
    const proxy = this.outbound.proxyFor(target);
    try {
      const res = await request(target, {
        method,
        headers,
        body,
        dispatcher: proxy === undefined ? this.agent : this.through(proxy),
        signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
      });
      const text = await this.readCapped(res.body);
      this.logger.debug(
        { upstream: this.name, method, path: target.pathname, status: res.statusCode, ms: elapsed(started) },
        'upstream call',
      );
      return { status: res.statusCode, headers: res.headers, json: parseJson(text), text };
    } catch (error) {
      const failed = transportError(this.name, error, proxy);
      const { failure, message } = failed;
      // The proxy's and the certificate's problems are the operator's to fix: the line says what and where.
      const detail = failure === 'proxy' || failure === 'certificate' ? { problem: message } : {};
      this.logger.warn(
        { upstream: this.name, method, path: target.pathname, failure, ...detail, proxy: proxy?.address, ms: elapsed(started) },
        'upstream call failed',
      );
      throw failed;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), ...[...this.proxied.values()].map((agent) => agent.close())]);
  }

  /** The ProxyAgent of `proxy`, with this client's pool size and TLS rule towards the upstream (through the tunnel). */
  private through(proxy: ProxyEndpoint): ProxyAgent {
    let agent = this.proxied.get(proxy.url);
    if (agent === undefined) {
      agent = new ProxyAgent({
        uri: proxy.url,
        keepAliveTimeout: KEEP_ALIVE_MS,
        connections: this.options.connections ?? 16,
        ...(this.options.insecureTls ? { requestTls: { rejectUnauthorized: false } } : {}),
      });
      this.proxied.set(proxy.url, agent);
    }
    return agent;
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

/** undici's words for a CONNECT the proxy did not answer with 200 (proxy-agent.js); a test through a real proxy pins them. */
const PROXY_REFUSAL = /^Proxy response \((\d{3})\) !== 200/;

/**
 * The failure as the caller will hear it. Through a proxy, a refused CONNECT and a proxy that cannot be
 * reached are the proxy's (the service connects to nothing else then) and say so; a certificate refused is
 * named with the setting that adds a private CA. Anything else keeps its kind, with the proxy it went through.
 */
function transportError(upstream: string, error: unknown, proxy: ProxyEndpoint | undefined): UpstreamTransportError {
  const code = codeOf(error);
  if (proxy !== undefined) {
    const status = PROXY_REFUSAL.exec(messageOf(error) ?? '')?.[1];
    const why = status === undefined ? unreachable(proxy, code) : refusal(proxy, Number(status));
    if (why !== undefined)
      return new UpstreamTransportError(
        upstream,
        'proxy',
        error,
        `${upstream} was not reached: the outbound proxy ${proxy.address} (${proxy.variable}) ${why}`,
      );
  }
  const certificate = certificateRefused(upstream, code, messageOf(error));
  if (certificate !== undefined) return new UpstreamTransportError(upstream, 'certificate', error, certificate);
  const failed = new UpstreamTransportError(upstream, classify(error), error);
  return proxy === undefined
    ? failed
    : new UpstreamTransportError(upstream, failed.failure, error, `${failed.message} (through the outbound proxy ${proxy.address})`);
}

/** The message of the error undici wrapped, where it wrapped one (the TLS error in a SecureProxyConnectionError). */
function messageOf(error: unknown): string | undefined {
  const e = error as { message?: string; cause?: { message?: string } };
  const code = stringCode(error);
  return code?.startsWith('UND_ERR_') && code !== 'UND_ERR_ABORTED' && e.cause?.message !== undefined ? e.cause.message : e.message;
}

/** The error's code, or its cause's where undici wrapped a socket's or TLS error in one of its own. */
function codeOf(error: unknown): string | undefined {
  const own = stringCode(error);
  const inner = stringCode((error as { cause?: unknown }).cause);
  return own?.startsWith('UND_ERR_') && inner !== undefined ? inner : (own ?? inner);
}

/** A Node or undici error code; a DOMException's (a TimeoutError's 23) is a number, not one of these. */
function stringCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

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
