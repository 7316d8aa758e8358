import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startFailureMessage } from '../../src/process/start-failure.js';
import { tempDir } from '../helpers/config.js';

test('a native module that does not load says "run npm rebuild", on one line', (t) => {
  const file = join(tempDir(t), 'addon.node');
  writeFileSync(file, 'not a shared object');
  const error = (() => {
    try {
      process.dlopen({ exports: {} }, file);
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.equal((error as NodeJS.ErrnoException).code, 'ERR_DLOPEN_FAILED');
  const line = startFailureMessage(error);
  assert.match(line, /run npm rebuild/);
  assert.doesNotMatch(line, /\n|STATE_DIR/);

  const abi = new Error(
    'The module was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 137.',
  );
  assert.match(startFailureMessage(abi), /^failed to start: .*run npm rebuild\. The module was compiled .* using NODE_MODULE_VERSION 115/);
});

test('any other failure is reported as it is', () => {
  assert.equal(startFailureMessage(new Error('cannot open the embedded store')), 'failed to start: cannot open the embedded store');
});
