// A pattern spelt out by bmpClass must mean the same to the three engines that read the OpenAPI document's
// patterns: ECMAScript with the `u` flag (the service's Ajv), ECMAScript without it (Spectral, many generators)
// and Python's `re`; and the keywords pattern must accept what `\p{L}\p{N}` accepted, within the BMP.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { bmpClass } from '../../src/core/portable-pattern.js';
import { KEYWORDS_PATTERN } from '../../src/routes/schemas.js';

const LETTERS_AND_DIGITS = /[\p{L}\p{N}]/u;
const ORIGINAL_KEYWORDS = /^[\p{L}\p{N} .,&'^=/()-]{1,64}$/u;

/** Every BMP code point, surrogates included (each alone is a lone surrogate, never a letter). */
const BMP = Array.from({ length: 0x10000 }, (_, code) => code);

const SAMPLES = [
  'micro',
  'IBM',
  'Nestlé',
  'Société Générale',
  'Tesco PLC',
  'AT&T',
  "McDonald's",
  'BRK.B',
  '^GSPC',
  'GC=F',
  'A/S (Class B) - 2',
  'Тинькофф',
  '三菱商事',
  'サムスン',
  'Ελληνικά',
  'עברית',
  'العربية',
  '१२३ ٤٥٦',
  'a'.repeat(64),
  'a'.repeat(65),
  '',
  '<script>',
  'x&function=RSI',
  'a\u0000b',
  'tab\there',
  'emoji 🙂',
  'math 𝐀𝐁𝐂',
  '𠀀 ideograph',
  'é'.normalize('NFD'),
];

function python(script: string, input: unknown): any {
  const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.error !== undefined) throw run.error;
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

const hasPython = spawnSync('python3', ['--version']).status === 0;
// CI installs python3 (.ci/run); elsewhere a machine without it skips, saying so.
const pythonTest = hasPython || process.env.CI === 'true' ? test : test.skip;

test('bmpClass holds exactly the BMP characters of the property, read with and without the u flag', () => {
  const klass = bmpClass(LETTERS_AND_DIGITS);
  const unicode = new RegExp(`^[${klass}]$`, 'u');
  const legacy = new RegExp(`^[${klass}]$`);
  const wrong: string[] = [];
  for (const code of BMP) {
    const char = String.fromCharCode(code);
    const expected = LETTERS_AND_DIGITS.test(char);
    if (unicode.test(char) !== expected || legacy.test(char) !== expected) wrong.push(code.toString(16));
  }
  assert.deepEqual(wrong, []);
  assert.ok(klass.length < 6_000, `${klass.length} characters`);
});

pythonTest("Python's re reads the spelt-out class as ECMAScript does", () => {
  const klass = bmpClass(LETTERS_AND_DIGITS);
  const accepted: number[] = python(
    'import json, re, sys\n' +
      'data = json.load(sys.stdin)\n' +
      "one = re.compile('[' + data + ']')\n" +
      'print(json.dumps([c for c in range(0x10000) if one.fullmatch(chr(c))]))\n',
    klass,
  );
  const expected = BMP.filter((code) => LETTERS_AND_DIGITS.test(String.fromCharCode(code)));
  assert.equal(accepted.length, expected.length);
  assert.deepEqual(accepted, expected);
});

pythonTest('the keywords pattern gives every sample the same verdict in the three engines, and the old one within the BMP', () => {
  const unicode = new RegExp(KEYWORDS_PATTERN, 'u');
  const legacy = new RegExp(KEYWORDS_PATTERN);
  // search, as Python's JSON Schema validators apply a pattern. (Python's `$` also matches before a final
  // newline, unlike ECMAScript's: no sample ends in one.)
  const fromPython: boolean[] = python(
    'import json, re, sys\n' +
      'data = json.load(sys.stdin)\n' +
      "pattern = re.compile(data['pattern'])\n" +
      "print(json.dumps([pattern.search(s) is not None for s in data['samples']]))\n",
    { pattern: KEYWORDS_PATTERN, samples: SAMPLES },
  );
  SAMPLES.forEach((sample, i) => {
    const verdict = unicode.test(sample);
    assert.equal(legacy.test(sample), verdict, `without u: ${JSON.stringify(sample)}`);
    assert.equal(fromPython[i], verdict, `python: ${JSON.stringify(sample)}`);
    const astral = [...sample].some((char) => (char.codePointAt(0) ?? 0) > 0xffff);
    if (astral) assert.equal(verdict, false, `astral characters are refused: ${sample}`);
    else assert.equal(verdict, ORIGINAL_KEYWORDS.test(sample), `as \\p{L}\\p{N} read it: ${JSON.stringify(sample)}`);
  });
  assert.ok(unicode.test('Société Générale') && unicode.test('三菱商事') && !unicode.test('<script>'));
});
