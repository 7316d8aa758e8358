// IBKR's documentation elides parts of its examples with "..." (recorded as .txt for that reason). A bare
// `...` standing for further list elements is dropped with the comma before it, which leaves the JSON the
// example shows; a "..." inside a string ("OCT24;NOV24;...;JAN27") is text and stays. Test-only: the
// substitution fills in nothing, so every value a test reads is IBKR's own.

const ELIDED_ELEMENTS = /,\s*\.\.\.(?=\s*[\]}])/g;

export function withoutElisions(text: string): unknown {
  return JSON.parse(text.replace(ELIDED_ELEMENTS, ''));
}
