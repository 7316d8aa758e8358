import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/config.js';

const probe = fileURLToPath(new URL('../fixtures/next-tick-feedback.mjs', import.meta.url));

/** V8's state for each property nextTick defines on a queue entry, after full GCs with nothing queued. */
function literalFeedback(t: TestContext, mode: 'pin' | 'none'): { states: string[]; printed: string } {
  // Into a file, not a pipe: Node leaves a stdout pipe non-blocking, and what %DebugPrint cannot write
  // at once is dropped (seen under load).
  const file = join(tempDir(t), 'feedback.txt');
  const out = openSync(file, 'w');
  try {
    execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--expose-gc', '--no-concurrent-recompilation', '--import', 'tsx', probe, mode],
      {
        stdio: ['ignore', out, 'inherit'],
      },
    );
  } finally {
    closeSync(out);
  }
  const printed = readFileSync(file, 'utf8');
  return { states: [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1] ?? ''), printed };
}

test('with the shape pinned, nextTick keeps defining its entries on the fast path after idle full GCs', (t) => {
  const { states: unpinned, printed } = literalFeedback(t, 'none');
  if (unpinned.length === 0) return t.skip(`this Node prints no feedback for %DebugPrint: ${printed.slice(0, 200)}`);
  if (!unpinned.includes('MEGAMORPHIC')) {
    return t.skip(`Node ${process.version} no longer loses nextTick's entry shape at a GC: src/process/next-tick-shape.ts can go`);
  }
  const pinned = literalFeedback(t, 'pin').states;
  assert.equal(pinned.length, unpinned.length);
  assert.deepEqual(new Set(pinned), new Set(['MONOMORPHIC']));
});
