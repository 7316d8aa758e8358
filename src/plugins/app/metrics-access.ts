// Who may read /metrics. Internals (routes, upstream errors, budgets, process figures) are not for the
// public API's callers: by default they are served on a listener of their own on loopback (METRICS_PORT,
// METRICS_HOST), where Prometheus or a sidecar scrapes them; on the public port only with METRICS_TOKEN as a
// bearer token. A missing or wrong token is told nothing: the same 404 as a route that does not exist.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerToken, sameSecret } from '../../core/bearer.js';
import type { Config } from '../../core/config.js';
import { ApiError, errorBody } from '../../core/errors.js';
import { echoed } from '../../core/parameter-text.js';

export type MetricsText = () => Promise<{ text: string; contentType: string }>;

/** True when the request may read the metrics: no token configured, or `Authorization: Bearer <token>`. */
export function authorised(token: string | undefined, header: string | undefined): boolean {
  if (token === undefined) return true;
  const given = bearerToken(header);
  return given !== undefined && sameSecret(given, token);
}

export function notFound(path: string): ApiError {
  return new ApiError('NOT_FOUND', `no route for GET ${echoed(path)}`);
}

/** The separate metrics listener: GET or HEAD /metrics, nothing else. */
export class MetricsListener {
  private server: Server | undefined;

  constructor(
    private readonly config: Config['metrics'],
    private readonly metrics: MetricsText,
  ) {}

  /** Starts listening when METRICS_PORT is not `off`; resolves to the scrape URL. */
  async listen(): Promise<string | undefined> {
    if (this.config.port === undefined || this.server !== undefined) return this.url();
    const server = createServer((req, res) => void this.answer(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => resolve());
    }).catch((error: unknown) => {
      // Not listening: forgotten, so close() has nothing to close and the service can go on without it.
      this.server = undefined;
      throw error;
    });
    return this.url();
  }

  url(): string | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) return undefined;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}/metrics`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const readable = (req.method === 'GET' || req.method === 'HEAD') && path === '/metrics';
    if (!readable || !authorised(this.config.token, req.headers.authorization)) {
      const id = randomUUID();
      const body = JSON.stringify(errorBody(notFound(path), id));
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': id }).end(body);
      return;
    }
    const { text, contentType } = await this.metrics();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
  }
}
