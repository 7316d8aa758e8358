// Where BatchedLines writes the JSON log: a file descriptor (stdout), written synchronously. Not pino's
// destination (sonic-boom): that one keeps a block whose write failed and writes it again with the next, so
// BatchedLines, which keeps what failed itself (and bounds it), would send those lines twice.
// A partial write goes on from the byte where it stopped. Stdout is a non-blocking pipe once anything reads
// process.stdout (config.ts does), so a reader that falls behind makes writes fail with EAGAIN: a write that
// may not wait throws then, saying how much went out, and BatchedLines tries the rest later while the event
// loop goes on serving (sonic-boom sleeps 100 ms per EAGAIN, with everything else stopped).
import { writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { type LineOutput, PartialWriteError } from './batched-lines.js';

export type WriteSync = (fd: number, data: string | Buffer) => number;

/** Characters of `text` wholly inside its first `bytes` UTF-8 bytes (a character cut in two is not). */
function charsIn(text: string, bytes: number): number {
  return new StringDecoder('utf8').write(Buffer.from(text).subarray(0, bytes)).length;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
const EAGAIN_PAUSE_MS = 5;

export class FdOutput implements LineOutput {
  /** The reader has gone (EPIPE): as pino's destination does, nothing more is written, nor kept for it. */
  private readerGone = false;

  constructor(
    private readonly fd: number,
    private readonly writeData: WriteSync = (fd, data) => (typeof data === 'string' ? writeSync(fd, data) : writeSync(fd, data)),
  ) {}

  write(block: string, waitMs = 0): void {
    if (this.readerGone) return;
    const deadline = performance.now() + waitMs;
    const total = Buffer.byteLength(block);
    let written = 0;
    // The whole block in one call, as a rule.
    let rest: string | Buffer = block;
    while (written < total) {
      let n: number;
      try {
        n = this.writeData(this.fd, rest);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          this.readerGone = true;
          return;
        }
        if (code === 'EAGAIN' && performance.now() < deadline) {
          Atomics.wait(pause, 0, 0, EAGAIN_PAUSE_MS);
          continue;
        }
        throw new PartialWriteError(charsIn(block, written), { cause: error });
      }
      if (n <= 0) throw new PartialWriteError(charsIn(block, written), { cause: new Error(`write to fd ${this.fd} wrote nothing`) });
      written += n;
      if (written < total) rest = Buffer.from(block).subarray(written);
    }
  }
}
