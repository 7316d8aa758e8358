import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { createProxy } from 'proxy';
import { tempDir } from './config.js';
import { issueCertificate } from './test-ca.js';

export interface ForwardProxyOptions {
  credentials?: { user: string; password: string };
  /** Hosts (host name, any port) whose CONNECTs are refused with 403. */
  deny?: string[];
  /** The proxy's own resolution: `host:port` as the client asks it -> where the proxy connects instead. */
  hosts?: Record<string, { host: string; port: number }>;
}

export interface ForwardProxy {
  /** http://127.0.0.1:port, with the credentials when the proxy requires them. */
  url: string;
  /** 127.0.0.1:port. */
  address: string;
  /** CONNECT targets in arrival order, as asked (`host:port`). */
  readonly connects: string[];
  /** Absolute-form requests in arrival order, as `METHOD host`. */
  readonly requests: string[];
  /** CONNECTs seen for `host` (any port). */
  tunnelsTo(host: string): number;
  /** From now on, only these credentials open a tunnel (a password changed at the proxy). */
  requireCredentials(credentials: { user: string; password: string }): void;
}

export async function startForwardProxy(t: TestContext, options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const server = createProxy(createServer());
  const { credentials, deny = [], hosts = {} } = options;
  let expected: string | undefined;
  const requireCredentials = (next: { user: string; password: string }) => {
    expected = `Basic ${Buffer.from(`${next.user}:${next.password}`).toString('base64')}`;
  };
  if (credentials !== undefined) requireCredentials(credentials);
  server.authenticate = (req: IncomingMessage) => expected === undefined || req.headers['proxy-authorization'] === expected;
  const connects: string[] = [];
  const requests: string[] = [];
  // The package's own CONNECT handler runs after the rules, on the target as this proxy resolves it.
  const [tunnel] = server.listeners('connect') as ((req: IncomingMessage, socket: Socket, head: Buffer) => void)[];
  server.removeAllListeners('connect');
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push(target);
    const host = target.slice(0, target.lastIndexOf(':'));
    if (deny.includes(host)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const mapped = hosts[target];
    if (mapped !== undefined) req.url = `${mapped.host}:${mapped.port}`;
    tunnel?.call(server, req, socket, head);
  });
  server.prependListener('request', (req: IncomingMessage) => {
    requests.push(`${req.method} ${new URL(req.url ?? '/', 'http://unknown').host}`);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userinfo = credentials === undefined ? '' : `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@`;
  return {
    url: `http://${userinfo}${address}`,
    address,
    connects,
    requests,
    tunnelsTo: (host) => connects.filter((c) => c.slice(0, c.lastIndexOf(':')) === host).length,
    requireCredentials,
  };
}

export interface PrivateCa {
  /** The CA certificate's file: what NODE_EXTRA_CA_CERTS names. */
  caFile: string;
  key: string;
  /** A certificate for every name given, signed by the CA. */
  cert: string;
}

/** A private CA and one certificate, signed by it, for `names` (the proxy's re-signed certificate). */
export async function privateCa(t: TestContext, names: readonly string[]): Promise<PrivateCa> {
  const issued = await issueCertificate(
    tempDir(t, 'mdp-ca-'),
    'mdp test inspection CA',
    names.map((n) => `DNS:${n}`),
  );
  return { caFile: issued.caFile, key: readFileSync(issued.keyFile, 'utf8'), cert: readFileSync(issued.certFile, 'utf8') };
}

/**
 * The inspecting end of the tunnels: a TLS server presenting `ca`'s certificate, relaying each connection's
 * clear bytes to the plain-HTTP origin its SNI name maps to. Returns its address, for the proxy's `hosts`.
 */
export async function startInspection(
  t: TestContext,
  ca: PrivateCa,
  origins: Record<string, { host: string; port: number }>,
): Promise<{ host: string; port: number }> {
  const sockets = new Set<Socket>();
  const server = createTlsServer({ key: ca.key, cert: ca.cert }, (clear: TLSSocket) => {
    const origin = origins[String(clear.servername)];
    if (origin === undefined) {
      clear.destroy();
      return;
    }
    const upstream = connect(origin.port, origin.host);
    for (const s of [clear, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => {
        clear.destroy();
        upstream.destroy();
      });
    }
    clear.pipe(upstream).pipe(clear);
  });
  // A client that refuses the certificate ends the handshake: not a failure of the test's proxy.
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}
