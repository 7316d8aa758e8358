import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { test } from 'node:test';
import { BatchedLines, PartialWriteError } from '../../src/log/batched-lines.js';

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

test('by default a block is 32 KiB: the request log writes once per hundred-odd lines, not once per 4 KiB', (t) => {
  const output = new RecordedOutput();
  const lines = new BatchedLines(output);
  t.after(() => lines.close());
  const line = `${JSON.stringify({ msg: 'request', pad: 'x'.repeat(280) })}\n`; // ~300 characters, as a request line
  const below = Math.floor((32 * 1024 - 1) / line.length);
  for (let i = 0; i < below; i += 1) lines.write(line);
  assert.equal(output.blocks.length, 0, `${below * line.length} characters pending, no write yet`);
  lines.write(line);
  assert.equal(output.blocks.length, 1, 'the line reaching 32 KiB writes the block');
  assert.equal(output.blocks[0], line.repeat(below + 1));
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
  t.after(() => assert.throws(() => lines.close(), /EBADF/, 'the line is still pending'));
  lines.write('x\n');
  let seen: Error | undefined;
  lines.flush((error) => (seen = error));
  assert.equal(seen?.message, 'EBADF');
});

/** Fails the writes it is told to (each by throwing, after `partial` characters when given), records the rest. */
class FlakyOutput {
  readonly written: string[] = [];
  attempts = 0;
  constructor(private readonly failures: { partial?: number }[]) {}
  write(block: string): boolean {
    this.attempts += 1;
    const failure = this.failures.shift();
    if (failure === undefined) {
      this.written.push(block);
      return true;
    }
    if (failure.partial === undefined) throw new Error('EIO: i/o error, write');
    this.written.push(block.slice(0, failure.partial));
    throw new PartialWriteError(failure.partial, { cause: new Error('ENOSPC: no space left on device, write') });
  }
}

const numbered = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `{"n":${from + i}}\n`);

test('a write that throws loses no line: the block stays pending and every line arrives exactly once, in order', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const output = new FlakyOutput([{}]);
  const lines = new BatchedLines(output, 40, 1_000);
  t.after(() => lines.close());
  const sent = numbered(30);
  assert.doesNotThrow(() => {
    for (const line of sent.slice(0, 10)) lines.write(line);
  }, 'the logging call does not fail with its output');
  assert.equal(output.attempts, 1, 'the first block was tried, and failed');
  for (const line of sent.slice(10, 20)) lines.write(line);
  assert.equal(output.attempts, 1, 'while the output fails, only the timer tries again');
  t.mock.timers.tick(1_000);
  assert.equal(output.attempts, 2);
  for (const line of sent.slice(20)) lines.write(line);
  lines.flushSync();
  assert.equal(output.written.join(''), sent.join(''));
  assert.equal(lines.droppedLines, 0);
});

test('a write that fails part way: what went out is not written again, the rest is', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  // The first try stops inside the third line (3 lines of 8 characters: 20 is 4 into the third).
  const output = new FlakyOutput([{ partial: 20 }, { partial: 0 }]);
  const lines = new BatchedLines(output, 24, 1_000);
  t.after(() => lines.close());
  const sent = numbered(12).map((line) => line.padStart(8, ' '));
  for (const line of sent) lines.write(line);
  t.mock.timers.tick(1_000);
  t.mock.timers.tick(1_000);
  assert.equal(output.attempts, 3);
  assert.equal(output.written.join(''), sent.join(''));
});

test('while the output keeps failing, what is held is bounded: the oldest lines are dropped and counted, and said first when it works again', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const failures = Array.from({ length: 1_000 }, () => ({}));
  const output = new FlakyOutput(failures);
  const lines = new BatchedLines(output, 100, 1_000, 1_000);
  t.after(() => lines.close());
  const sent = numbered(500); // 10 characters a line, 5,000 in all
  for (const [i, line] of sent.entries()) {
    lines.write(line);
    if (i % 50 === 0) t.mock.timers.tick(1_000);
  }
  assert.ok(lines.droppedLines > 300, `${lines.droppedLines} dropped`);
  failures.length = 0;
  t.mock.timers.tick(1_000);
  const [notice, ...kept] = output.written.join('').split(/(?<=\n)/);
  assert.match(
    notice ?? '',
    new RegExp(`^\\{"level":40,"time":\\d+,"msg":"log output failed: ${sent.length - kept.length} older log lines were dropped"\\}\\n$`),
  );
  assert.deepEqual(kept, sent.slice(sent.length - kept.length), 'the newest lines, in order');
  assert.ok(kept.join('').length <= 1_000, 'never more than the bound held');
  assert.equal(lines.droppedLines, 0);
  JSON.parse(notice ?? '');
});

test('a partly written line is never dropped, and the dropped-lines notice goes after it', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const failures: { partial?: number }[] = [{ partial: 5 }, ...Array.from({ length: 100 }, () => ({}))];
  const output = new FlakyOutput(failures);
  const lines = new BatchedLines(output, 10, 1_000, 100);
  t.after(() => lines.close());
  const sent = numbered(40);
  for (const line of sent) lines.write(line);
  failures.length = 0;
  t.mock.timers.tick(1_000);
  const text = output.written.join('');
  const [first, notice, ...kept] = text.split(/(?<=\n)/);
  assert.equal(first, sent[0], 'the line whose start went out is completed');
  assert.match(notice ?? '', /"msg":"log output failed: \d+ older log lines were dropped"/);
  assert.deepEqual(kept, sent.slice(sent.length - kept.length));
});

test('after a failure, what is held goes out in writes of at most 64 KiB, and the hot path tries again every 16 blocks', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const output = new FlakyOutput([{}, {}]);
  const lines = new BatchedLines(output, 1_000, 1_000);
  t.after(() => lines.close());
  const sent = Array.from({ length: 400 }, (_, i) => `${JSON.stringify({ n: i, pad: 'x'.repeat(980) })}\n`); // ~1,000 characters each
  lines.write(sent[0]!);
  lines.write(sent[1]!);
  assert.equal(output.attempts, 1, 'the first block failed');
  for (const line of sent.slice(2, 17)) lines.write(line);
  assert.equal(output.attempts, 1, 'no try on each line');
  for (const line of sent.slice(17, 19)) lines.write(line);
  assert.equal(output.attempts, 2, '16 blocks later, a try (which fails too)');
  for (const line of sent.slice(19)) lines.write(line);
  assert.ok(output.attempts > 3, 'and with the output back, the hot path writes again');
  lines.flushSync();
  assert.ok(
    output.written.every((block) => block.length <= 64 * 1024),
    'writes of 64 KiB at most',
  );
  assert.equal(output.written.join(''), sent.join(''));
});
