// The schema of the environment (src/core/config-schema.ts) is the one list of variables: .env.example must
// name exactly those, with the same defaults, so that it cannot drift from what the service reads. (The
// configuration reference is generated from the schema: test/scripts/docs-reference.test.ts.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CACHE_WINDOWS, EnvSchema, VARIABLES } from '../../src/core/config-schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
const cacheVariables = (edge: string) => Object.keys(CACHE_WINDOWS).map((name) => `CACHE_${name}_${edge}_SECONDS`);

function defaultOf(name: string): string | undefined {
  const value = (EnvSchema.properties as Record<string, { default?: unknown }>)[name]?.default;
  return value === undefined ? undefined : String(value);
}

test('.env.example names every variable of the schema, set to its default or commented out', () => {
  const lines = readFileSync(join(ROOT, '.env.example'), 'utf8').split('\n');
  const named = new Map<string, string | undefined>();
  for (const line of lines) {
    const match = /^(#\s*)?([A-Z][A-Z0-9_]+)=(\S*)/.exec(line);
    if (match === null) continue;
    const [, commented, name = '', value] = match;
    assert.ok(VARIABLES.includes(name), `${name} is in .env.example but not in the schema`);
    named.set(name, commented === undefined ? value : undefined);
  }
  // The cache windows are one line naming the pattern; the rest each have a line.
  const cacheWindows = new Set([...cacheVariables('FRESH'), ...cacheVariables('STALE')]);
  const missing = VARIABLES.filter((name) => !named.has(name) && !cacheWindows.has(name));
  assert.deepEqual(missing, []);
  for (const [name, value] of named)
    if (value !== undefined) assert.equal(value, defaultOf(name), `${name} set in .env.example to something other than its default`);
});
