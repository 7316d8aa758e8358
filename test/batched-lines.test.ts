import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { test } from 'node:test';
import { BatchedLines } from '../src/batched-lines.js';

/** Records each block it is handed and says so with a 'block' event. */
class RecordedOutput extends EventEmitter {
  readonly blocks: string[] = [];
  write(block: string): boolean {
    this.blocks.push(block);
    this.emit('block', block);
    return true;
  }
}

test('lines are handed over in blocks of at least the block size, in order, and the rest on flush', (t) => {
  const output = new RecordedOutput();
  const lines = new BatchedLines(output, 100, 60_000);
  t.after(() => lines.close());
  const sent = Array.from({ length: 25 }, (_, i) => `{"n":${i}}\n`.padEnd(20, ' '));
  for (const line of sent) lines.write(line);
  assert.equal(output.blocks.length, 5, 'one block per 100 characters');
  assert.ok(output.blocks.every((block) => block.length >= 100));
  lines.write('last\n');
  assert.equal(output.blocks.length, 5, 'a short remainder waits');
  let flushed = false;
  lines.flush(() => (flushed = true));
  assert.ok(flushed);
  assert.equal(output.blocks.join(''), [...sent, 'last\n'].join(''));
  lines.flushSync();
  assert.equal(output.blocks.length, 6, 'nothing pending, nothing written');
});

test('a quiet logger still shows its lines: the pending block is written on the timer', async (t) => {
  const output = new RecordedOutput();
  const lines = new BatchedLines(output, 4096, 20);
  t.after(() => lines.close());
  // The batch timer is unref'd (it must not hold a process open); this keeps the loop alive until it fires.
  const alive = setInterval(() => {}, 1_000);
  t.after(() => clearInterval(alive));
  const written = once(output, 'block');
  lines.write('started\n');
  assert.deepEqual(await written, ['started\n']);
});

test('a failing output reaches the flush callback', (t) => {
  const failing = {
    write(): boolean {
      throw new Error('EBADF');
    },
  };
  const lines = new BatchedLines(failing, 4096, 60_000);
  t.after(() => lines.close());
  lines.write('x\n');
  let seen: Error | undefined;
  lines.flush((error) => (seen = error));
  assert.equal(seen?.message, 'EBADF');
});
