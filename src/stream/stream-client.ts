// One browser's event stream on a raw response. Writes never queue without bound: while the socket is
// not draining, only the latest frame per topic is kept (older ones are dropped, the page only shows the
// latest anyway), and a socket that stays blocked past `slowClientMs` is closed.
//
// A frame goes to the socket as one HTTP/1.1 chunk encoded once for every stream: through
// ServerResponse.write the same bytes cost a chunk-size string, four queued writes, a cork and a
// nextTick per socket; a fan-out to 10,000 streams took 100 to 110 ms of CPU that way, 88 to 92 ms this
// way (most of what is left is the kernel's). Once the response holds its socket its head has been
// written, and it writes nothing more until `end`, so the socket's order is the stream's.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Caller } from '../core/caller.js';

const CRLF = Buffer.from('\r\n');

/** An SSE frame as bytes, and the same bytes as one chunk of a chunked response. */
export class Frame {
  readonly bytes: Buffer;
  readonly chunk: Buffer;

  constructor(text: string) {
    const bytes = Buffer.from(text);
    const head = Buffer.from(`${bytes.length.toString(16)}\r\n`);
    this.chunk = Buffer.concat([head, bytes, CRLF]);
    this.bytes = this.chunk.subarray(head.length, head.length + bytes.length);
  }
}

/** Keeps proxies from closing a quiet stream. */
const HEARTBEAT = new Frame(':\n\n');

export interface StreamClientOptions {
  /** Who holds the stream: the per-caller cap counts it, and its topics' polls are put to its account. */
  caller: Caller;
  /** How long a socket may stay blocked before it is closed. */
  slowClientMs: number;
  /** The `retry:` hint: how long a browser waits before reconnecting. */
  retryMs: number;
}

export class StreamClient {
  readonly caller: Caller;
  /** Frames held back while the socket is blocked, latest per topic. */
  private readonly pending = new Map<string, Frame>();
  private blockedSince: number | undefined;
  private closed = false;
  /** Frames replaced before they could be written. */
  dropped = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: StreamClientOptions,
  ) {
    this.caller = options.caller;
    res.on('drain', this.flush);
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
    // Through the response: its first write carries the head.
    this.block(this.res.write(`retry: ${this.options.retryMs}\n\n`));
    // The server's idle timeout (app.ts: the connection timeout) never fires on a stream: its heartbeat writes
    // long before, and a socket that stops taking writes is closed after slowClientMs. But every write refreshed
    // its timer: 5 % of a write's CPU in a fan-out (9.3 against 8.8 µs a write, 2,000 streams, median of 12
    // alternating rounds on a shared machine).
    this.res.socket?.setTimeout(0);
  }

  get blocked(): boolean {
    return this.blockedSince !== undefined;
  }

  /** Bytes held for this client: in the socket's user-space buffer and in the held-back frames. */
  get bufferedBytes(): number {
    let bytes = this.res.writableLength;
    for (const frame of this.pending.values()) bytes += frame.bytes.length;
    return bytes;
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  send(topic: string, frame: Frame): void {
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
    this.write(HEARTBEAT);
  }

  /** A last frame, then the end of the response. */
  end(frame: string): void {
    if (this.isClosed) return;
    this.closed = true;
    this.res.end(frame);
  }

  private write(frame: Frame): void {
    const socket = this.res.socket;
    // Not yet its socket's response (pipelined behind another): ServerResponse queues until it is.
    if (socket === null || socket === undefined) return this.block(this.res.write(frame.bytes));
    this.block(socket.write(this.res.chunkedEncoding ? frame.chunk : frame.bytes), socket);
  }

  /** A write left bytes in user space: held-back frames wait for the drain. */
  private block(written: boolean, socket?: Socket): void {
    if (written || this.blockedSince !== undefined) return;
    this.blockedSince = Date.now();
    // The response hears of a drain only after its own write was refused.
    socket?.once('drain', this.flush);
  }

  private readonly flush = (): void => {
    if (this.blockedSince === undefined) return;
    this.blockedSince = undefined;
    for (const [topic, frame] of this.pending) {
      this.pending.delete(topic);
      this.write(frame);
      if (this.blocked) return;
    }
  };
}
