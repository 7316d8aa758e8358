// A loopback TCP proxy in front of the real Redis (or a simulator) that a test can cut and restore, to make it
// "go away" (connection refused: nothing listens on the port) and "come back" on the same port, without touching
// the server other tests share.
import { once } from 'node:events';
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { TestContext } from 'node:test';
import { REDIS_URL } from './redis-helper.js';

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private hold: { ms: number; arrived: () => void; matches: (chunk: Buffer) => boolean } | undefined;
  private held: { sent: () => void; waiting: (() => void)[] } | undefined;
  port = 0;

  constructor(
    /** Where connections go; may be set after the proxy listens (a simulator started once its address is known). */
    public targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts listening (on the same port after a cut, so clients reconnect to it). */
  async open(): Promise<void> {
    const server = createServer((client) => {
      const held = this.held;
      if (held === undefined) return this.forward(client, []);
      const sent: Buffer[] = [];
      this.sockets.add(client);
      client.on('error', () => client.destroy());
      client.on('data', (chunk: Buffer) => {
        sent.push(chunk);
        held.sent();
      });
      held.waiting.push(() => {
        client.removeAllListeners('data');
        this.forward(client, sent);
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /**
   * Connections made from now on are accepted but go nowhere, what they send kept, until `release()`:
   * a server that is slow to answer a new client. Resolves once one of them has sent something.
   */
  holdNewConnections(): Promise<void> {
    return new Promise((sent) => {
      this.held = { sent, waiting: [] };
    });
  }

  /** Forwards the held connections (with what they sent) and every later one. */
  release(): void {
    const waiting = this.held?.waiting ?? [];
    this.held = undefined;
    for (const forward of waiting) forward();
  }

  private forward(client: Socket, sent: Buffer[]): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const chunk of sent) upstream.write(chunk);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const hold = this.hold;
      if (hold === undefined || !hold.matches(chunk)) {
        client.write(chunk);
        return;
      }
      // Later chunks queue behind the held one, so replies keep their order.
      this.hold = undefined;
      upstream.pause();
      hold.arrived();
      setTimeout(() => {
        client.write(chunk);
        upstream.resume();
      }, hold.ms);
    });
  }

  /**
   * Delays the next chunk Redis sends back (the next that `matches`, if given) by `ms` (a slow link); resolves when
   * that chunk has reached the proxy.
   */
  holdNextReply(ms: number, matches: (chunk: Buffer) => boolean = () => true): Promise<void> {
    return new Promise((arrived) => {
      this.hold = { ms, arrived, matches };
    });
  }

  /** Drops every connection and stops accepting: Redis is gone as far as clients can tell. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export async function startProxy(t: TestContext, targetPort = Number(new URL(REDIS_URL).port || 6379)): Promise<TcpProxy> {
  const proxy = new TcpProxy(targetPort);
  await proxy.open();
  t.after(() => proxy.cut());
  return proxy;
}
