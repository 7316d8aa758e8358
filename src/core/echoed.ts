// A caller's value repeated in an error message is cut: an 8,000-character `function` was once echoed twice,
// a 16 KB error body, and a long value pushes what the message says out of sight. Every message that repeats
// caller input goes through this one function.

/** The most characters of a caller's value an error message repeats, the cut's `…` included. @internal */
export const MAX_ECHOED = 100;

/** `value` as an error message may repeat it: whole up to 100 characters, else its start and `…`. */
export function echoed(value: string): string {
  if (value.length <= MAX_ECHOED) return value;
  let end = MAX_ECHOED - 1;
  // Never half a surrogate pair (an emoji cut in two is not valid UTF-16, and JSON escapes it).
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${value.slice(0, end)}…`;
}
