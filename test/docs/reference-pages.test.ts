// The hand-written reference pages hold everything the service can answer with: every error code with its
// status, every header the OpenAPI document describes or CORS exposes, every stream parameter. A code, a header
// or a topic added to the service without its line in the reference fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { ApiError, ERROR_CODES } from '../../src/core/errors.js';
import { withOfflineApp } from '../../scripts/docs/offline-app.js';
import { ROOT } from './pages.js';

const page = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Node {
  type: string;
  depth?: number;
  value?: string;
  children?: Node[];
}

/** The code spans of each heading of a page, as lists. */
function headingCode(markdown: string): string[][] {
  const found: string[][] = [];
  const visit = (node: Node) => {
    if (node.type === 'heading') found.push((node.children ?? []).filter((c) => c.type === 'inlineCode').map((c) => c.value ?? ''));
    for (const child of node.children ?? []) visit(child);
  };
  visit(fromMarkdown(markdown) as Node);
  return found;
}

test('the errors page gives every error code its status, and names no other', () => {
  const rows = page('docs/reference/errors.md')
    .split('\n')
    .map((line) => /^\|\s*(\d{3})\s*\|\s*`([A-Z_]+)`\s*\|/.exec(line))
    .filter((match) => match !== null)
    .map((match) => `${match[1]} ${match[2]}`);
  const expected = ERROR_CODES.map((code) => `${new ApiError(code, '').status} ${code}`);
  for (const row of expected) assert.ok(rows.includes(row), `${row} is in the table`);
  // The codes answered with a second status: a wrong or missing bearer token (ApiError's `unauthenticated`).
  const extra = rows.filter((row) => !expected.includes(row));
  assert.deepEqual(extra, ['401 BROKER_FORBIDDEN', '401 MCP_FORBIDDEN']);
});

test('the headers page has a section for every header the document describes and CORS exposes', async () => {
  const { documented, exposed } = await withOfflineApp(async (app) => {
    const doc = app.swagger() as { components: { headers: Record<string, unknown> } };
    const answer = await app.inject({ url: '/api/system/live', headers: { origin: 'https://dashboard.example' } });
    return {
      // Cache-Control-Private documents broker data's Cache-Control: the same header.
      documented: Object.keys(doc.components.headers).map((name) => name.replace(/-Private$/, '')),
      exposed: String(answer.headers['access-control-expose-headers']).split(/,\s*/),
    };
  });
  assert.ok(exposed.includes('X-Cache'), `CORS exposes headers: ${exposed.join(', ')}`);
  const headings = headingCode(page('docs/reference/headers.md'))
    .flat()
    .map((name) => name.toLowerCase());
  for (const name of new Set([...documented, ...exposed, 'X-Data-Freshness', 'Vary']))
    assert.ok(headings.includes(name.toLowerCase()), `docs/reference/headers.md has a heading for ${name}`);
});

test('the stream page names every parameter of /api/stream and every event', async () => {
  const parameters = await withOfflineApp(async (app) => {
    const doc = app.swagger() as { paths: Record<string, { get: { parameters: { name: string }[] } }> };
    return doc.paths['/api/stream']?.get.parameters.map((p) => p.name) ?? [];
  });
  assert.ok(parameters.length >= 5, parameters.join(', '));
  const text = page('docs/reference/stream.md');
  for (const name of parameters) assert.match(text, new RegExp(`\`${name}=`), `${name}= is on the stream page`);
  for (const event of ['quote', 'brokerQuotes', 'overview', 'status', 'error', 'shutdown'])
    assert.ok(text.includes(`\`${event}\``), `the ${event} event is on the stream page`);
});
