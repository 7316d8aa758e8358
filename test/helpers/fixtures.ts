// Recorded upstream bodies kept under test/fixtures/<upstream>/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', 'fixtures');

export function fixtureText(upstream: string, name: string): string {
  return readFileSync(join(ROOT, upstream, name), 'utf8');
}

export function fixture(upstream: string, name: string): any {
  return JSON.parse(fixtureText(upstream, name));
}
