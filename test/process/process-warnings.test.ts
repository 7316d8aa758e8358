import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import pino from 'pino';
import { logProcessWarnings } from '../../src/process/process-warnings.js';

test('process warnings become JSON log lines; the node:sqlite experimental notice only at debug', async (t) => {
  const before = process.listeners('warning');
  t.after(() => {
    process.removeAllListeners('warning');
    for (const listener of before) process.on('warning', listener);
  });
  const lines: Record<string, unknown>[] = [];
  logProcessWarnings(pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }));

  process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
  await once(process, 'warning');
  process.emitWarning('something to look at', { type: 'DeprecationWarning', code: 'DEP0999' });
  await once(process, 'warning');
  assert.deepEqual(
    lines.map(({ level, msg, warning }) => ({ level, msg, warning })),
    [
      { level: 20, msg: 'SQLite is an experimental feature and might change at any time', warning: { name: 'ExperimentalWarning' } },
      { level: 40, msg: 'something to look at', warning: { name: 'DeprecationWarning', code: 'DEP0999' } },
    ],
  );
});
