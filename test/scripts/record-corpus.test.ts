// The recorded corpus (test/fixtures/recorded/) stays consistent, whether written by hand or by
// `npm run record`: each SOURCES.md table is the one rendered from its recordings.json, every file is
// listed and every listed body exists, every entry is complete, and nothing looks like a credential.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRecordings, renderTable, tableOf, TABLE_END, TABLE_START, withTable } from '../../scripts/record/corpus.js';
import { PROVIDERS as PLANNED } from '../../scripts/record/plan.js';
import { credentialFindings } from '../../scripts/record/scrub.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';
import { ORIGINS, PROVIDERS, RECORDED_ROOT } from '../helpers/recorded.js';

const OWN_FILES = new Set(['recordings.json', 'SOURCES.md']);

test('the recorder knows the same providers as the corpus', () => {
  assert.deepEqual([...PLANNED].sort(), [...PROVIDERS].sort());
  assert.deepEqual(
    readdirSync(RECORDED_ROOT)
      .filter((f) => statSync(join(RECORDED_ROOT, f)).isDirectory())
      .sort(),
    [...PROVIDERS].sort(),
  );
});

for (const provider of PROVIDERS) {
  const dir = join(RECORDED_ROOT, provider);

  test(`${provider}: the SOURCES.md table is the one rendered from recordings.json`, () => {
    const sources = readFileSync(join(dir, 'SOURCES.md'), 'utf8');
    assert.equal(sources.split(TABLE_START).length, 2, 'one start marker');
    assert.equal(sources.split(TABLE_END).length, 2, 'one end marker');
    assert.equal(
      tableOf(sources),
      renderTable(readRecordings(dir)),
      'the table is generated: edit recordings.json, then `npm run record -- --render-tables`',
    );
    assert.equal(withTable(sources, tableOf(sources)), sources, 'rewriting the table changes nothing else');
  });

  test(`${provider}: every file is listed in recordings.json and every listed body exists`, () => {
    const recordings = readRecordings(dir);
    const listed = recordings.map((r) => r.body);
    const files = readdirSync(dir).filter((f) => !OWN_FILES.has(f));
    assert.deepEqual(
      files.filter((f) => !listed.includes(f)),
      [],
      'files not in recordings.json',
    );
    assert.deepEqual(
      listed.filter((b) => !files.includes(b)),
      [],
      'bodies missing from the directory',
    );
    assert.equal(new Set(listed).size, listed.length, 'a body file listed twice');
    const names = recordings.map((r) => r.name);
    assert.equal(new Set(names).size, names.length, 'a name listed twice');
  });

  test(`${provider}: every entry has its fields, with valid values`, () => {
    for (const r of readRecordings(dir)) {
      const where = `${provider}/${r.name}`;
      assert.match(r.name, /^[a-z0-9]+(?:-[a-z0-9]+)*$/, `${where}: name in kebab-case`);
      assert.equal(typeof r.body, 'string', `${where}: body`);
      assert.ok(['GET', 'POST'].includes(r.request?.method), `${where}: request.method`);
      assert.match(r.request.path, /^\//, `${where}: request.path`);
      for (const [k, v] of Object.entries(r.request.query ?? {})) assert.equal(typeof v, 'string', `${where}: query ${k}`);
      assert.ok(
        !Object.keys(r.request.query ?? {}).some((k) => /^api[-_]?key$/i.test(k)),
        `${where}: a credential parameter in the request`,
      );
      assert.ok(Number.isInteger(r.status) && r.status >= 100 && r.status <= 599, `${where}: status is an HTTP status number`);
      assert.ok((ORIGINS as readonly string[]).includes(r.origin), `${where}: origin is one of ${ORIGINS.join(', ')}`);
      assert.ok(typeof r.source === 'string' && r.source.trim() !== '', `${where}: source`);
      assert.match(r.date, /^(?:\d{4}-\d{2}-\d{2}|unknown)\b/, `${where}: date (YYYY-MM-DD or "unknown", a remark may follow)`);
      assert.ok(typeof r.edits === 'string' && r.edits.trim() !== '', `${where}: edits ("none" when none)`);
      if (r.contentType !== undefined) assert.equal(typeof r.contentType, 'string', `${where}: contentType`);
      if (r.notes !== undefined) assert.equal(typeof r.notes, 'string', `${where}: notes`);
    }
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

test('no file in the corpus holds anything that looks like a credential', () => {
  const known = Object.values(SANDBOX_CREDENTIALS);
  const found = filesUnder(RECORDED_ROOT).flatMap((file) =>
    credentialFindings(readFileSync(file, 'latin1'), known).map((f) => `${file}: ${f}`),
  );
  assert.deepEqual(found, []);
});
