// Checks a log line as a log collector reads it. JSON.parse keeps the last of two equal keys without a
// word, so duplicates are found on momoa's syntax tree, which keeps every member as written.
import { type ObjectNode, parse, traverse } from '@humanwhocodes/momoa';

/** Keys written more than once in one object of the line (as "path.key"); throws on invalid JSON. */
export function duplicateKeys(line: string): string[] {
  const found: string[] = [];
  traverse(parse(line), {
    enter(node) {
      if (node.type !== 'Object') return;
      const seen = new Set<string>();
      for (const member of (node as ObjectNode).members) {
        const name = member.name.type === 'String' ? member.name.value : member.name.name;
        if (seen.has(name)) found.push(name);
        seen.add(name);
      }
    },
  });
  return found;
}
