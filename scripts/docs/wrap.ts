// Prose wrapped for the docs' line length, shared by the generated pages.
/** Prose lines stay within markdownlint's line length (.markdownlint-cli2.jsonc). */
const WIDTH = 120;

/** A word that would open a list, a heading or a quote at the start of a line. */
const BLOCK_START = /^([*+>#-]|\d+[.)])$/;

export function wrap(text: string, width = WIDTH): string {
  const lines: string[] = [];
  let line = '';
  const words = text.split(/\s+/).filter(Boolean);
  for (const word of words) {
    // Break before this word, unless the line would then begin with a block marker.
    if (line !== '' && line.length + 1 + word.length > width && !BLOCK_START.test(word)) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}
