// A JSON Schema `pattern` is read by more than one regular expression engine: the service's own Ajv
// (ECMAScript with the `u` flag), OpenAPI linters and code generators (ECMAScript without it: Spectral), and
// Python's `re` (validators and clients written in Python). A Unicode property escape such as `\p{L}` means
// "any letter" to the first only; the second reads it as the letters `p{L}` and the third refuses it. This
// spells a property out as the ranges of the Basic Multilingual Plane it covers, in `\uXXXX` escapes, which
// all three read alike (test/core/portable-pattern.test.ts runs them). Characters beyond the BMP (historic
// scripts, mathematical letters, rare CJK ideographs) are left out: no one pattern reads them alike in the
// three, since an astral character is one code point to two of them and a surrogate pair to the third.

const hex = (code: number) => `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The body of a character class (without the brackets) holding every BMP character `property` matches.
 * `property` is a one-character test such as `/[\p{L}\p{N}]/u`.
 */
export function bmpClass(property: RegExp): string {
  const parts: string[] = [];
  let start = -1;
  // 0x10000 closes the last run; surrogates are never letters or digits and match nothing alone.
  for (let code = 0; code <= 0x10000; code += 1) {
    const inside = code < 0x10000 && (code < 0xd800 || code > 0xdfff) && property.test(String.fromCharCode(code));
    if (inside && start < 0) start = code;
    if (!inside && start >= 0) {
      const end = code - 1;
      parts.push(end === start ? hex(start) : `${hex(start)}${end === start + 1 ? '' : '-'}${hex(end)}`);
      start = -1;
    }
  }
  return parts.join('');
}
