// A loopback TCP relay in front of a simulator that a test can shut (connection refused: nothing listens
// on the port) and reopen on the same port (the upstream is back), without touching the simulator.
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpGate {
  port = 0;
  targetPort = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every connection and stops listening. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  close(): Promise<void> {
    return this.cut();
  }
}
