// Log lines gathered in memory and handed to the output in blocks. pino's own destination can buffer
// too (`minLength`), but it measures the whole pending block (Buffer.byteLength) on every line it adds,
// which cost as much as serialising the line (callgrind, on a cache hit); here a line costs an array
// push, and the block is joined once. The output (fd-output.ts) does the writes and partial writes.
// Blocks are 32 KiB (BLOCK_CHARS): a write costs some 5 µs besides its bytes (fs.writeSync's checks, the
// string's encoding, the system call), which 4 KiB blocks (17 request lines) put at 300 ns a line, about 2 % of
// a cache hit's CPU, and 32 KiB blocks at 40 ns (bench: a line built and written, 400,000 lines to /dev/null
// and to a pipe). Half a pipe's buffer, so that a reader keeping up takes each block whole.
//
// A block whose write fails stays pending, less what the output says went out before the failure, and is
// tried again later; a failing output never throws into the code that logs. What is held is bounded
// (MAX_PENDING_CHARS): past it the oldest lines are dropped and counted, and the count goes out as a line of
// its own ahead of the rest once the output works again.
import type { DestinationStream } from 'pino';

/**
 * What the blocks are handed to. write() returns once the whole block is written, or throws; the output
 * keeps nothing of a failed block (pino's destination, sonic-boom, does keep it and writes it again with the
 * next one, so it cannot be this output: those lines would go out twice). A throw may tell how many leading
 * characters of the block were written before the failure (PartialWriteError); any other throw means none.
 * `waitMs`: how long the output may block waiting for a full reader (0: not at all).
 */
export interface LineOutput {
  write(block: string, waitMs: number): unknown;
}

export class PartialWriteError extends Error {
  constructor(
    readonly writtenChars: number,
    options: { cause: unknown },
  ) {
    super(`${options.cause instanceof Error ? options.cause.message : String(options.cause)} (after ${writtenChars} characters)`, options);
  }
}

/**
 * 4 MiB of characters: at the request log's ~400 characters a line, about 10,000 lines, which rides out a
 * log reader's stall of seconds at full load or minutes at an ordinary one, and is small beside the cache's
 * own bound (64 MiB). Beyond a stall that long the log has a gap either way; the memory is worth more.
 * @internal
 */
export const MAX_PENDING_CHARS = 4 * 1024 * 1024;
/** A block is written once this many characters are pending (see the top of this file). */
const BLOCK_CHARS = 32 * 1024;
/** One write at most, so that a try after a failure joins this much, not everything held. */
const MAX_WRITE_CHARS = 64 * 1024;
/**
 * How long an explicit flush (shutdown, exit) waits for a full pipe to drain. The timer's and the hot
 * path's writes never wait: the event loop serves requests meanwhile. Past this, the reader is stuck.
 */
const FLUSH_WAIT_MS = 2_000;

/** The line that stands for the lines dropped while the output failed, in pino's JSON shape (level warn). @internal */
export function droppedLinesLine(count: number, time = Date.now()): string {
  return `{"level":40,"time":${time},"msg":"log output failed: ${count} older log lines were dropped"}\n`;
}

export class BatchedLines implements DestinationStream {
  private pending: string[] = [];
  private pendingChars = 0;
  /** pending[0] is the unwritten rest of a line whose start went out: it is never dropped. */
  private headIsRest = false;
  /** Lines dropped (oldest first) since the output last worked. */
  private dropped = 0;
  /** write() tries the output once this much is pending: a block, or after a failure 16 more. */
  private nextTryChars: number;
  private readonly timer: NodeJS.Timeout;

  /**
   * @param blockChars a block is written once this many characters are pending...
   * @param everyMs ...or after this long, so that a quiet service's lines still show promptly.
   * @param maxPendingChars at most this much is held while the output fails.
   */
  constructor(
    private readonly output: LineOutput,
    private readonly blockChars = BLOCK_CHARS,
    everyMs = 1_000,
    private readonly maxPendingChars = MAX_PENDING_CHARS,
  ) {
    this.nextTryChars = blockChars;
    this.timer = setInterval(() => this.tryWrite(), everyMs).unref();
  }

  /** Lines dropped since the output last worked (0 while it works). */
  get droppedLines(): number {
    return this.dropped;
  }

  write(line: string): boolean {
    if (line.length === 0) return true; // would never count toward a block, nor ever be dropped
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars > this.maxPendingChars) this.dropOldest();
    if (this.pendingChars >= this.nextTryChars) this.tryWrite();
    return true;
  }

  /** Writes what is pending, waiting a little for a full pipe; on a failure keeps what did not go out, and throws. */
  flushSync(): void {
    this.writePending(FLUSH_WAIT_MS);
  }

  /** pino's logger.flush(callback) lands here. */
  flush(callback?: (error?: Error) => void): void {
    try {
      this.flushSync();
    } catch (error) {
      callback?.(error as Error);
      return;
    }
    callback?.();
  }

  /** Writes what is pending and stops the timer (tests; a process exits without it). */
  close(): void {
    clearInterval(this.timer);
    this.flushSync();
  }

  private tryWrite(): void {
    try {
      this.writePending(0);
    } catch {
      // Kept, and tried again later; the logging call itself must not fail with its output.
    }
  }

  private writePending(waitMs: number): void {
    while (this.pendingChars > 0 || this.dropped > 0) {
      let end = this.pending.length;
      if (this.pendingChars > MAX_WRITE_CHARS) {
        let chars = this.pending[0]!.length;
        for (end = 1; end < this.pending.length && chars + this.pending[end]!.length <= MAX_WRITE_CHARS; end += 1)
          chars += this.pending[end]!.length;
      }
      const notice = this.dropped > 0 ? (this.headIsRest ? 1 : 0) : -1;
      const pieces = this.pending.slice(0, end);
      if (notice >= 0) pieces.splice(notice, 0, droppedLinesLine(this.dropped));
      try {
        this.output.write(pieces.join(''), waitMs);
      } catch (error) {
        this.keepUnwritten(pieces, notice, end, error instanceof PartialWriteError ? error.writtenChars : 0);
        // Each try costs a failed write and a join of one write's worth: not on every line.
        this.nextTryChars = this.pendingChars + 16 * this.blockChars;
        throw error;
      }
      if (end === this.pending.length) {
        this.pending = [];
        this.pendingChars = 0;
      } else {
        for (const line of this.pending.splice(0, end)) this.pendingChars -= line.length;
      }
      this.headIsRest = false;
      this.dropped = 0;
    }
    this.nextTryChars = this.blockChars;
  }

  /**
   * After a failed write of `pieces` (pending[0, end) with the dropped-lines notice at `notice`, or -1):
   * the unwritten part replaces them at the head of what is pending.
   */
  private keepUnwritten(pieces: string[], notice: number, end: number, writtenChars: number): void {
    let written = writtenChars;
    let out = 0; // pieces wholly written
    while (out < pieces.length && written >= pieces[out]!.length) written -= pieces[out++]!.length;
    const rest = pieces.slice(out);
    if (written > 0) rest[0] = rest[0]!.slice(written);
    // The notice, once (even partly) out, is said; one not reached is rebuilt with the count on the next try.
    if (notice >= 0 && notice < out + (written > 0 ? 1 : 0)) this.dropped = 0;
    else if (notice >= 0) rest.splice(notice - out, 1);
    if (out > 0 || written > 0) this.headIsRest = written > 0;
    this.pending.splice(0, end, ...rest);
    this.pendingChars = this.pending.reduce((sum, line) => sum + line.length, 0);
  }

  /** Drops the oldest lines down to three quarters of the bound, so that it runs once per many lines, not each. */
  private dropOldest(): void {
    const first = this.headIsRest ? 1 : 0;
    const target = Math.floor((this.maxPendingChars * 3) / 4);
    let chars = this.pendingChars;
    let end = first;
    // The newest line always stays.
    while (end < this.pending.length - 1 && chars > target) chars -= this.pending[end++]!.length;
    this.pending.splice(first, end - first);
    this.dropped += end - first;
    this.nextTryChars -= this.pendingChars - chars;
    this.pendingChars = chars;
  }
}
