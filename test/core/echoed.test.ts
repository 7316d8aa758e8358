import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { echoed, MAX_ECHOED } from '../../src/core/echoed.js';

test('a value up to 100 characters is echoed whole; a longer one is cut to 100 characters, ending in …', () => {
  assert.equal(MAX_ECHOED, 100);
  assert.equal(echoed('IBM'), 'IBM');
  assert.equal(echoed('x'.repeat(100)), 'x'.repeat(100));
  assert.equal(echoed('x'.repeat(8_000)), `${'x'.repeat(99)}…`);
  // The 99th character would be the first half of an emoji: the cut comes before it.
  assert.equal(echoed(`${'x'.repeat(98)}${'😀'.repeat(10)}`), `${'x'.repeat(98)}…`);
  fc.assert(
    fc.property(fc.string({ maxLength: 400, unit: 'grapheme' }), (value) => {
      const shown = echoed(value);
      assert.ok(shown.length <= MAX_ECHOED);
      if (value.length <= MAX_ECHOED) assert.equal(shown, value);
      else assert.ok(value.startsWith(shown.slice(0, -1)) && shown.endsWith('…'));
      // Never half a surrogate pair: the cut is valid UTF-16, as JSON and a log collector read it.
      assert.equal(Buffer.from(shown, 'utf8').toString('utf8'), shown, 'no lone surrogate, which UTF-8 cannot carry');
    }),
  );
});
