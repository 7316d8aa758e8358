// Log lines gathered in memory and handed to the output in blocks. pino's own destination can buffer
// too (`minLength`), but it measures the whole pending block (Buffer.byteLength) on every line it adds,
// which cost as much as serialising the line (callgrind, on a cache hit); here a line costs an array
// push, and the block is joined once. The output is still pino's destination (sonic-boom), which does
// the writes, partial writes and EAGAIN retries.
import type { DestinationStream } from 'pino';

/** What the lines are handed to: pino.destination() in synchronous mode. */
export interface LineOutput {
  write(block: string): boolean;
}

export class BatchedLines implements DestinationStream {
  private pending: string[] = [];
  private pendingChars = 0;
  private readonly timer: NodeJS.Timeout;

  /**
   * @param blockChars a block is written once this many characters are pending...
   * @param everyMs ...or after this long, so that a quiet service's lines still show promptly.
   */
  constructor(
    private readonly output: LineOutput,
    private readonly blockChars = 4096,
    everyMs = 1_000,
  ) {
    this.timer = setInterval(() => this.flushSync(), everyMs).unref();
  }

  write(line: string): boolean {
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars >= this.blockChars) this.flushSync();
    return true;
  }

  flushSync(): void {
    if (this.pendingChars === 0) return;
    const block = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    this.output.write(block);
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
}
