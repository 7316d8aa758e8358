// A real forward proxy for tests: the npm `proxy` package (a CONNECT and absolute-form HTTP proxy in Node,
// by the author of https-proxy-agent), started on loopback port 0, with what a corporate proxy adds:
// - Basic credentials (`credentials`): anything else is answered 407, by the package itself;
// - a deny rule (`deny`): a CONNECT to a listed host is answered 403, as Squid's `http_access deny` does;
// - its own name resolution (`hosts`): the provider host names resolve to the simulators here, as a hosts
//   file would for the proxy alone (the service never resolves them: it only sends CONNECT host:port);
// - TLS inspection (`inspect`): the tunnels to those hosts end at a TLS server whose certificate for the
//   host is signed by a private CA (made with openssl in the test's directory), which relays the clear
//   bytes to the plain-HTTP simulator, as an inspecting proxy re-signs what it decrypts.
// Every CONNECT is counted by the host:port the client asked for, before any rule, and so is every
// absolute-form request by its host.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { createProxy } from 'proxy';
import { tempDir } from './config.js';

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
  const dir = tempDir(t, 'mdp-ca-');
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => promisify(execFile)('openssl', args);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-subj',
    '/CN=mdp test inspection CA',
    '-days',
    '1',
  );
  await openssl('req', ...ecKey, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', `/CN=${names[0]}`);
  writeFileSync(file('san.ext'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
  await openssl(
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('leaf.crt'),
    '-days',
    '1',
    '-extfile',
    file('san.ext'),
  );
  return { caFile: file('ca.crt'), key: readFileSync(file('leaf.key'), 'utf8'), cert: readFileSync(file('leaf.crt'), 'utf8') };
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
