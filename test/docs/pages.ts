// The documentation pages the docs tests read: the README, the pages beside it, and every page under docs/.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export function documentationPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      return statSync(join(ROOT, path)).isDirectory() ? under(path) : path.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...under('docs')].sort();
}
