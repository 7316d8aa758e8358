// One character of each class core/parameter-text.ts refuses in a parameter's value, with the words its
// message uses: for the rule's own tests and for the routes'.

export const REFUSED_CHARACTERS: ReadonlyArray<[code: number, kind: string]> = [
  [0x0000, 'a control character'],
  [0x0009, 'a control character'],
  [0x000a, 'a control character'],
  [0x007f, 'a control character'],
  [0x0085, 'a control character'],
  [0x200b, 'a zero-width character'],
  [0x200c, 'a zero-width character'],
  [0x200d, 'a zero-width character'],
  [0x2060, 'a zero-width character'],
  [0xfeff, 'a zero-width character'],
  [0x00a0, 'a no-break space'],
  [0x2007, 'a no-break space'],
  [0x202f, 'a no-break space'],
  [0x202a, 'a text direction control'],
  [0x202e, 'a text direction control'],
  [0x2066, 'a text direction control'],
  [0x2069, 'a text direction control'],
  [0x200f, 'a text direction control'],
  [0x00ad, 'an invisible format character'],
  [0xe0041, 'an invisible format character'],
  [0x2028, 'a line or paragraph separator'],
  [0x2029, 'a line or paragraph separator'],
];

/** `U+00A0`, as the messages write a code point. */
export const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
