// The base of every simulated upstream: a real HTTP(S) server on loopback, a per-path request count that
// tests read to prove caching, and fault switches (latency, 5xx, 429, malformed JSON, HTML 200, dropped or
// reset connections, slow drip, huge bodies) settable in code or over HTTP at /__sandbox/faults; a simulator
// adds switches of its own upstream (extraControl) under /__sandbox/<name>.
import { EventEmitter, once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export const FAULT_KINDS = ['http5xx', 'http429', 'malformed', 'html200', 'drop', 'reset-mid-body', 'slow-drip', 'huge'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Faults {
  /** Delay before every answer. */
  latencyMs: number;
  fault: FaultKind | null;
  /** How many requests the fault affects; null means until cleared. */
  remaining: number | null;
  /** Status for http5xx (default 503). */
  status?: number;
  /** `Retry-After` seconds sent with http429; omitted when unset. */
  retryAfter?: number;
}

export interface SimRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or undefined. */
  body: unknown;
  rawBody: string;
}

export interface SimResponse {
  status: number;
  /** Objects are sent as JSON; strings as they are. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type SimHandler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

export interface SimulatedUpstreamOptions {
  name: string;
  handler: SimHandler;
  /** Serve HTTPS with this key and certificate. */
  tls?: { key: string; cert: string };
  host?: string;
  port?: number;
}

const NO_FAULTS: Faults = { latencyMs: 0, fault: null, remaining: null };

/** @internal */
export interface SimRequestEvent {
  method: string;
  path: string;
  /** The query exactly as received, for tests that check nothing was smuggled into it. */
  query: URLSearchParams;
}

/** Emits `arrival` (a SimRequestEvent) as each counted request arrives, and `request` once it is answered. */
export class SimulatedUpstream extends EventEmitter {
  readonly name: string;
  protected readonly server: Server;
  private readonly handler: SimHandler;
  private readonly options: SimulatedUpstreamOptions;
  private faults: Faults = { ...NO_FAULTS };
  private counts = new Map<string, number>();
  private total = 0;

  constructor(options: SimulatedUpstreamOptions) {
    super();
    this.name = options.name;
    this.handler = options.handler;
    this.options = options;
    const listener = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    this.server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createHttpServer(listener);
    this.server.keepAliveTimeout = 60_000;
  }

  async listen(): Promise<string> {
    this.server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1');
    await once(this.server, 'listening');
    return this.origin;
  }

  get origin(): string {
    const { port } = this.server.address() as AddressInfo;
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  setFaults(faults: Partial<Faults>): void {
    this.faults = { ...NO_FAULTS, ...faults };
  }

  clearFaults(): void {
    this.faults = { ...NO_FAULTS };
  }

  getFaults(): Faults {
    return { ...this.faults };
  }

  /** Requests answered per path (control endpoints excluded). */
  count(path?: string): number {
    return path === undefined ? this.total : (this.counts.get(path) ?? 0);
  }

  stats(): { total: number; byPath: Record<string, number> } {
    return { total: this.total, byPath: Object.fromEntries(this.counts) };
  }

  resetStats(): void {
    this.counts = new Map();
    this.total = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox.local');
    const rawBody = await readBody(req);
    if (url.pathname.startsWith('/__sandbox/')) {
      this.control(req.method ?? 'GET', url.pathname, rawBody, res);
      return;
    }
    this.total += 1;
    this.counts.set(url.pathname, (this.counts.get(url.pathname) ?? 0) + 1);
    // Before the answer is worked out: where a provider judges its limits (a slow first answer would move `request`).
    this.emit('arrival', { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams } satisfies SimRequestEvent);
    try {
      const fault = this.takeFault();
      if (this.faults.latencyMs > 0) await delay(this.faults.latencyMs);
      if (fault !== null && this.injectFault(fault, res)) return;
      const response = await this.handler({ method: req.method ?? 'GET', url, headers: req.headers, body: parseJson(rawBody), rawBody });
      send(res, response, fault === 'malformed');
    } catch (error) {
      send(res, { status: 500, body: { error: `simulator failure: ${(error as Error).message}` } });
    } finally {
      this.emit('request', { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams } satisfies SimRequestEvent);
    }
  }

  /** A simulator's own switches under /__sandbox/<name>; undefined when the path is not one of them. */
  protected extraControl(_method: string, _path: string, _body: unknown): SimResponse | undefined {
    return undefined;
  }

  private takeFault(): FaultKind | null {
    const { fault, remaining } = this.faults;
    if (fault === null) return null;
    if (remaining !== null) {
      if (remaining <= 0) return null;
      this.faults.remaining = remaining - 1;
    }
    return fault;
  }

  /** Answers with the fault and returns true, or returns false when the handler should still run. */
  private injectFault(fault: FaultKind, res: ServerResponse): boolean {
    switch (fault) {
      case 'http5xx':
        send(res, {
          status: this.faults.status ?? 503,
          body: '<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>',
          headers: { 'content-type': 'text/html' },
        });
        return true;
      case 'http429':
        send(res, {
          status: 429,
          body: { error: 'Too Many Requests' },
          headers: this.faults.retryAfter === undefined ? {} : { 'retry-after': String(this.faults.retryAfter) },
        });
        return true;
      case 'html200':
        send(res, {
          status: 200,
          body: '<!DOCTYPE html><html><head><title>Maintenance</title></head><body>Down for maintenance</body></html>',
          headers: { 'content-type': 'text/html' },
        });
        return true;
      case 'drop':
        res.socket?.destroy();
        return true;
      case 'reset-mid-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
        res.write('{"partial": "bo');
        setImmediate(() => res.socket?.destroy());
        return true;
      case 'slow-drip': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 200);
        res.on('close', () => clearInterval(timer));
        return true;
      }
      case 'huge':
        sendHuge(res).catch(() => res.destroy());
        return true;
      case 'malformed':
        return false;
    }
  }

  private control(method: string, path: string, rawBody: string, res: ServerResponse): void {
    if (path === '/__sandbox/faults' && method === 'GET') return send(res, { status: 200, body: this.faults });
    if (path === '/__sandbox/faults' && method === 'DELETE') {
      this.clearFaults();
      return send(res, { status: 200, body: this.faults });
    }
    if (path === '/__sandbox/faults' && method === 'POST') {
      const body = parseJson(rawBody) as Partial<Faults> | undefined;
      if (body === undefined || (body.fault != null && !FAULT_KINDS.includes(body.fault))) {
        return send(res, { status: 400, body: { error: `fault must be one of ${FAULT_KINDS.join(', ')}` } });
      }
      this.setFaults(body);
      return send(res, { status: 200, body: this.faults });
    }
    if (path === '/__sandbox/stats' && method === 'GET') return send(res, { status: 200, body: this.stats() });
    if (path === '/__sandbox/stats' && method === 'DELETE') {
      this.resetStats();
      return send(res, { status: 200, body: this.stats() });
    }
    const extra = this.extraControl(method, path, parseJson(rawBody));
    if (extra !== undefined) return send(res, extra);
    send(res, { status: 404, body: { error: 'unknown sandbox control endpoint' } });
  }
}

/**
 * 32 MiB, more than any sane cap, streamed as a real server would: with backpressure, stopping when the
 * client hangs up (writing it all at once would stall this process's event loop, TLS especially).
 */
async function sendHuge(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = `"${'x'.repeat(65_534)}",`;
  res.write('[');
  for (let i = 0; i < 512; i += 1) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  if (!res.destroyed) res.end('"x"]');
}

function send(res: ServerResponse, response: SimResponse, malformed = false): void {
  if (res.headersSent || res.destroyed) return;
  const isText = typeof response.body === 'string';
  let text = response.body === undefined ? '' : isText ? (response.body as string) : JSON.stringify(response.body);
  if (malformed) text = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  res.writeHead(response.status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
    ...response.headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
