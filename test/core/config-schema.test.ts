// The schema of the environment (src/core/config-schema.ts) is the one list of variables: the README's
// configuration table and .env.example must name exactly those, with the same defaults, so neither can
// drift from what the service reads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CACHE_WINDOWS, EnvSchema, VARIABLES } from '../../src/core/config-schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE_PATTERN = /^CACHE_<NAME>_(FRESH|STALE)_SECONDS$/;
const cacheVariables = (edge: string) => Object.keys(CACHE_WINDOWS).map((name) => `CACHE_${name}_${edge}_SECONDS`);

/** A documented name: the pattern row stands for every cache window's variable. */
function expand(name: string): string[] {
  const match = CACHE_PATTERN.exec(name);
  return match === null ? [name] : cacheVariables(match[1] as string);
}

function defaultOf(name: string): string | undefined {
  const value = (EnvSchema.properties as Record<string, { default?: unknown }>)[name]?.default;
  return value === undefined ? undefined : String(value);
}

/** The README's configuration table: one row per variable or group, names and defaults in backticks. */
function readmeRows(): { names: string[]; defaults: string[] }[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [names = '', defaults = ''] = line.split(' | ');
      const ticks = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1] as string);
      return { names: ticks(names), defaults: ticks(defaults) };
    });
}

/**
 * Documented in their docs/how-to page instead, until the README (issue 35's, rewritten around a generated
 * configuration reference) takes them: the outbound proxy's (docs/how-to/corporate-proxy.md).
 */
const DOCUMENTED_ELSEWHERE: Readonly<Record<string, string>> = {
  HTTPS_PROXY: 'docs/how-to/corporate-proxy.md',
  HTTP_PROXY: 'docs/how-to/corporate-proxy.md',
  NO_PROXY: 'docs/how-to/corporate-proxy.md',
  PROXY_ALSO_FOR: 'docs/how-to/corporate-proxy.md',
};

test('the README configuration table names every variable of the schema, and no other', () => {
  const documented = readmeRows().flatMap((row) => row.names.flatMap(expand));
  for (const [name, page] of Object.entries(DOCUMENTED_ELSEWHERE)) {
    if (documented.includes(name)) continue;
    assert.match(readFileSync(join(ROOT, page), 'utf8'), new RegExp(`\\b${name}\\b`), `${name} documented in ${page}`);
    documented.push(name);
  }
  assert.deepEqual([...new Set(documented)].sort(), [...VARIABLES].sort());
  assert.equal(documented.length, new Set(documented).size, 'each variable documented once');
});

test('the README gives each variable its schema default where its row gives one per variable', () => {
  for (const { names, defaults } of readmeRows()) {
    if (names.length !== defaults.length || names.some((n) => CACHE_PATTERN.test(n))) continue;
    names.forEach((name, i) => {
      const schema = defaultOf(name);
      if (schema !== undefined) assert.equal(defaults[i], schema, name);
    });
  }
});

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
