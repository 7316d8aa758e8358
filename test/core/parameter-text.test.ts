// The one text rule of every parameter: surrounding spaces trimmed, and characters that have no place in a
// value refused with the parameter and the character named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApiError } from '../../src/core/errors.js';
import { echoed, parameterText, trimSpaces } from '../../src/core/parameter-text.js';
import { hex, REFUSED_CHARACTERS } from '../helpers/refused-characters.js';

test('every refused character is named, with its parameter, wherever it stands in the value', () => {
  for (const [code, kind] of REFUSED_CHARACTERS) {
    const character = String.fromCodePoint(code);
    for (const value of [`${character}IBM`, `IBM${character}`, `I${character}BM`, ` ${character} `]) {
      assert.throws(
        () => parameterText('symbol', value),
        (error: ApiError) =>
          error.code === 'INVALID_PARAMETER' && error.message === `symbol contains ${hex(code)} (${kind}), which has no place in a value`,
        `${hex(code)} in ${JSON.stringify(value)}`,
      );
    }
  }
});

test('surrounding spaces are trimmed, the ones inside kept; a no-break space is never trimmed away', () => {
  assert.equal(parameterText('symbol', ' IBM '), 'IBM');
  assert.equal(parameterText('keywords', '\u3000bank of\u2003'), 'bank of', 'ideographic and em spaces are spaces');
  assert.equal(parameterText('interval', 'monthly'), 'monthly', 'nothing else changes: letter case is the reader’s');
  assert.equal(parameterText('symbol', '   '), '');
  // trimSpaces leaves a refused character in place, for the reader of the value to refuse (JavaScript's own
  // trim() would take a no-break space or U+FEFF away silently).
  assert.equal(trimSpaces(' \u00A0IBM\uFEFF '), '\u00A0IBM\uFEFF');
  assert.equal(trimSpaces('\u2007IBM'), '\u2007IBM');
});

test('an echoed value is cut to 100 characters, whole characters only', () => {
  assert.equal(echoed('GLOBAL_QUOTE'), 'GLOBAL_QUOTE');
  assert.equal(echoed('x'.repeat(100)), 'x'.repeat(100));
  assert.equal(echoed('x'.repeat(8_000)), `${'x'.repeat(99)}…`);
  const astral = '𝐗'.repeat(150);
  assert.equal([...echoed(astral)].length, 100);
  assert.ok(echoed(astral).startsWith('𝐗'.repeat(99)), 'no surrogate pair is cut in half');
});
