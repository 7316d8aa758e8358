import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BatchedLines, PartialWriteError } from '../../src/log/batched-lines.js';
import { FdOutput, type WriteSync } from '../../src/log/fd-output.js';
import { tempDir } from '../helpers/config.js';

/** A file descriptor's writes, `step` bytes at most per call, failing the calls listed in `fail` (1-based). */
function fakeFd(step: number, fail: number[] = []): { write: WriteSync; bytes: () => string; calls: () => number } {
  const chunks: Buffer[] = [];
  let calls = 0;
  return {
    write(_fd, data) {
      calls += 1;
      if (fail.includes(calls)) throw Object.assign(new Error('EAGAIN: resource temporarily unavailable, write'), { code: 'EAGAIN' });
      const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data);
      chunks.push(buffer.subarray(0, step));
      return Math.min(step, buffer.length);
    },
    bytes: () => Buffer.concat(chunks).toString(),
    calls: () => calls,
  };
}

test('a block goes to the file descriptor whole', (t) => {
  const file = join(tempDir(t), 'out.log');
  const fd = openSync(file, 'w');
  t.after(() => closeSync(fd));
  const output = new FdOutput(fd);
  output.write('{"a":1}\n');
  output.write('{"b":"é—漢字😀"}\n');
  assert.equal(readFileSync(file, 'utf8'), '{"a":1}\n{"b":"é—漢字😀"}\n');
});

test('partial writes go on from the byte where they stopped, multi-byte characters cut in two included', () => {
  const fd = fakeFd(5);
  const block = '{"b":"é—漢字😀"}\n'.repeat(3);
  new FdOutput(9, fd.write).write(block);
  assert.equal(fd.bytes(), block);
});

test('a failure says how many characters went out (whole ones), and the output keeps nothing', () => {
  const fd = fakeFd(4, [3]);
  const block = 'ab漢cdefgh\n';
  const error = (() => {
    try {
      new FdOutput(9, fd.write).write(block);
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.ok(error instanceof PartialWriteError);
  // Two calls of 4 bytes: "ab" + 漢 (3 bytes) + "cde"... "ab漢" is 5 bytes, so 8 bytes are "ab漢cde".
  assert.equal(error.writtenChars, 'ab漢cde'.length);
  assert.match(error.message, /EAGAIN/);
  assert.equal((error.cause as NodeJS.ErrnoException).code, 'EAGAIN');
});

test('with BatchedLines: a write that fails once loses no line and sends none twice', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const fd = fakeFd(7, [2]);
  const lines = new BatchedLines(new FdOutput(9, fd.write), 30, 1_000);
  t.after(() => lines.close());
  const sent = Array.from({ length: 20 }, (_, i) => `{"n":${i},"s":"é"}\n`);
  for (const line of sent) lines.write(line);
  t.mock.timers.tick(1_000);
  lines.flushSync();
  assert.equal(fd.bytes(), sent.join(''));
});

test('a closed descriptor: the error names it and nothing is thrown at the logging call', (t) => {
  const file = join(tempDir(t), 'out.log');
  const fd = openSync(file, 'w');
  closeSync(fd);
  const lines = new BatchedLines(new FdOutput(fd), 1, 60_000);
  assert.doesNotThrow(() => lines.write('x\n'));
  let seen: Error | undefined;
  lines.flush((error) => (seen = error));
  assert.equal((seen?.cause as NodeJS.ErrnoException | undefined)?.code, 'EBADF');
  assert.throws(() => lines.close(), PartialWriteError);
});

test('an explicit flush waits for a full pipe (EAGAIN) a little; the hot path does not', () => {
  const fd = fakeFd(1_000, [1, 2]);
  const output = new FdOutput(9, fd.write);
  assert.throws(
    () => output.write('first\n', 0),
    (e: unknown) => e instanceof PartialWriteError && e.writtenChars === 0,
  );
  output.write('second\n', 1_000);
  assert.equal(fd.bytes(), 'second\n');
  assert.equal(fd.calls(), 3);
});

test('a reader that has gone (EPIPE): nothing more is written, and nothing is kept for it', () => {
  let calls = 0;
  const output = new FdOutput(9, () => {
    calls += 1;
    throw Object.assign(new Error('EPIPE: broken pipe, write'), { code: 'EPIPE' });
  });
  const lines = new BatchedLines(output, 1, 60_000);
  lines.write('a\n');
  lines.write('b\n');
  assert.doesNotThrow(() => lines.close());
  assert.equal(calls, 1);
});

test('stdout as a real pipe whose reader falls behind (EAGAIN): every line arrives exactly once, in order', async () => {
  // The child makes its stdout non-blocking as the service does (reading process.stdout), logs 400 KB while
  // the parent reads nothing, and counts the failed writes; its close() waits for the reader.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `
      import { BatchedLines } from ${JSON.stringify(new URL('../../src/log/batched-lines.ts', import.meta.url).href)};
      import { FdOutput } from ${JSON.stringify(new URL('../../src/log/fd-output.ts', import.meta.url).href)};
      void process.stdout.isTTY;
      const fd = new FdOutput(1);
      let failures = 0;
      const lines = new BatchedLines({ write(block, waitMs) { try { fd.write(block, waitMs); } catch (e) { failures += 1; throw e; } } });
      for (let i = 0; i < 2000; i++) lines.write(JSON.stringify({ n: i, pad: 'x'.repeat(180) }) + '\\n');
      process.stderr.write('failures ' + failures + '\\n');
      lines.close();
      `,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.pause();
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  // Read once the child has logged everything (and so met the full pipe).
  const exited = once(child, 'close') as Promise<[number | null]>;
  await Promise.race([new Promise<void>((resolve) => child.stderr.on('data', () => stderr.includes('failures') && resolve())), exited]);
  child.stdout.resume();
  const [code] = await exited;
  assert.equal(code, 0, stderr);
  assert.ok(Number(/failures (\d+)/.exec(stderr)?.[1]) > 0, `the pipe was full at least once: ${stderr}`);
  const received = Buffer.concat(chunks)
    .toString()
    .split('\n')
    .filter((line) => line !== '');
  assert.deepEqual(
    received.map((line) => (JSON.parse(line) as { n: number }).n),
    Array.from({ length: 2000 }, (_, i) => i),
  );
});
