// One browser's event stream on a raw response. Writes never queue without bound: while the socket is
// not draining, only the latest frame per topic is kept (older ones are dropped, the page only shows the
// latest anyway), and a socket that stays blocked past `slowClientMs` is closed.
import type { ServerResponse } from 'node:http';

export interface StreamClientOptions {
  address: string;
  /** How long a socket may stay blocked before it is closed. */
  slowClientMs: number;
  /** The `retry:` hint: how long a browser waits before reconnecting. */
  retryMs: number;
}

export class StreamClient {
  readonly address: string;
  /** Frames held back while the socket is blocked, latest per topic. */
  private readonly pending = new Map<string, Buffer | string>();
  private blockedSince: number | undefined;
  private closed = false;
  /** Frames replaced before they could be written. */
  dropped = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: StreamClientOptions,
  ) {
    this.address = options.address;
    res.on('drain', () => this.flush());
  }

  /** The response head (the headers the pipeline set: CORS, request id, mode) and the retry hint. */
  open(headers: Record<string, string | number | string[]>): void {
    this.res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // Proxies that buffer responses (nginx) would hold events back.
      'x-accel-buffering': 'no',
    });
    this.write(`retry: ${this.options.retryMs}\n\n`);
  }

  get blocked(): boolean {
    return this.blockedSince !== undefined;
  }

  /** Bytes held for this client: in the socket's user-space buffer and in the held-back frames. */
  get bufferedBytes(): number {
    let bytes = this.res.writableLength;
    for (const frame of this.pending.values()) bytes += frame.length;
    return bytes;
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  send(topic: string, frame: Buffer | string): void {
    if (this.isClosed) return;
    if (this.blocked) {
      if (this.pending.has(topic)) this.dropped += 1;
      this.pending.set(topic, frame);
      return;
    }
    this.write(frame);
  }

  /** A comment keeps proxies from closing a quiet stream; a socket blocked too long is closed instead. */
  heartbeat(now: number): void {
    if (this.isClosed) return;
    if (this.blockedSince !== undefined) {
      if (now - this.blockedSince > this.options.slowClientMs) this.res.destroy();
      return;
    }
    this.write(':\n\n');
  }

  /** A last frame, then the end of the response. */
  end(frame: string): void {
    if (this.isClosed) return;
    this.closed = true;
    this.res.end(frame);
  }

  private write(frame: Buffer | string): void {
    if (!this.res.write(frame)) this.blockedSince ??= Date.now();
  }

  private flush(): void {
    this.blockedSince = undefined;
    for (const [topic, frame] of this.pending) {
      this.pending.delete(topic);
      this.write(frame);
      if (this.blocked) return;
    }
  }
}
