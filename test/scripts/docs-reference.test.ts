// The generated parts of docs/reference/ say what the code does: the configuration reference every setting of
// the schema, with its default and allowed values; the metrics reference every series of the registry, with its
// labels. A page that differs from what `npm run docs:generate` writes fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { EnvSchema, VARIABLES } from '../../src/core/config-schema.js';
import { withOfflineApp } from '../../scripts/docs/offline-app.js';
import {
  blockOf,
  configurationReference,
  descriptionMarkdown,
  GENERATED,
  generatedPage,
  metricsReference,
  registryMetrics,
  STANDARD_METRIC,
  withBlock,
} from '../../scripts/docs/reference.js';
import { wrap } from '../../scripts/docs/wrap.js';

const ROOT = join(import.meta.dirname, '..', '..');

test('every generated page says what the code does (else run npm run docs:generate)', async () => {
  await withOfflineApp(async (app) => {
    for (const { file, block, render } of GENERATED) {
      const page = readFileSync(join(ROOT, file), 'utf8');
      assert.ok(blockOf(page, block) !== undefined, `${file} has the markers of the ${block} block`);
      assert.equal(page, generatedPage(file, page, block, render(app)), `${file} differs from the code: run npm run docs:generate`);
    }
  });
});

test('the configuration reference gives every setting its default, its allowed values and its description', () => {
  const text = configurationReference();
  const schemas = EnvSchema.properties as Record<string, { default?: unknown; description?: string }>;
  for (const name of VARIABLES) {
    const heading = text.indexOf(`### \`${name}\`\n`);
    const row = text.indexOf(`| \`${name}\` |`);
    assert.ok(heading >= 0 || row >= 0, `${name} is in the reference`);
    const entry = heading >= 0 ? text.slice(heading, text.indexOf('\n### ', heading + 1)) : text.slice(row, text.indexOf('\n', row));
    const fallback = schemas[name]?.default;
    assert.ok(entry.includes(fallback === undefined ? 'unset' : `\`${String(fallback)}\``), `${name}: its default`);
    assert.ok(schemas[name]?.description, `${name} has a description in the schema`);
    assert.ok(entry.includes((schemas[name]?.description ?? '').split(' ')[0] as string), `${name}: its description`);
  }
  assert.match(text, /### `LOG_LEVEL`[\s\S]*?Allowed: one of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`/);
  assert.match(text, /### `METRICS_PORT`[\s\S]*?Allowed: `off`, or an integer from 0 to 65535/);
  assert.match(text, /### `BROKER_TOKEN`[\s\S]*?Secret: never logged/);
  assert.match(text, /\[`BROKER_TOKEN`\]\(#broker_token\)/, 'setting names in descriptions link to their entries');
});

test('the metrics reference lists every service series with its labels; the rest are prom-client defaults', async () => {
  await withOfflineApp(async (app) => {
    const metrics = registryMetrics(app);
    const table = metricsReference(metrics);
    const ours = metrics.filter((m) => !STANDARD_METRIC.test(m.name));
    assert.ok(ours.length >= 15, `${ours.length} service series`);
    for (const metric of ours) {
      assert.match(metric.name, /^mdp_/, 'the service names its own series mdp_*');
      const row = table.split('\n').find((line) => line.startsWith(`| \`${metric.name}\``));
      assert.ok(row, `${metric.name} is in the table`);
      for (const label of metric.labelNames) assert.ok(row.includes(`\`${label}\``), `${metric.name}: label ${label}`);
    }
    const duration = metrics.find((m) => m.name === 'mdp_http_request_duration_seconds');
    assert.deepEqual(duration?.labelNames, ['method', 'route', 'status'], 'the fast histogram lists its labels');
  });
});

test('wrap keeps prose within the width and never starts a line with a block marker', () => {
  const text = `${'word '.repeat(30)}- not a list ${'x'.repeat(10)} * nor this`;
  const lines = wrap(text, 40).split('\n');
  assert.ok(
    lines.every((line) => line.length <= 42),
    lines.join('\n'),
  );
  assert.ok(
    lines.every((line) => !/^[-*] /.test(line)),
    lines.join('\n'),
  );
});

test('a description becomes Markdown: setting names linked, HTML and emphasis characters escaped, code kept', () => {
  assert.equal(
    descriptionMarkdown('With BROKER_TOKEN, send Authorization: Bearer <token>; port * for any, or `*` and `<b>` as code.', 'X'),
    'With [`BROKER_TOKEN`](#broker_token), send Authorization: Bearer &lt;token>; port \\* for any, or `*` and `<b>` as code.',
  );
  assert.equal(
    descriptionMarkdown('See CACHE_QUOTE_FRESH_SECONDS and NOT_A_SETTING.', 'X'),
    'See [`CACHE_QUOTE_FRESH_SECONDS`](#cache-windows) and NOT_A_SETTING.',
  );
});

test('a block is replaced between its markers only', () => {
  const page = 'before\n<!-- generated: x (npm run docs:generate writes what follows) -->\nold\n<!-- end of generated: x -->\nafter\n';
  const next = withBlock(page, 'x', 'new');
  assert.equal(blockOf(next, 'x'), 'new');
  assert.ok(next.startsWith('before\n') && next.endsWith('after\n'));
  assert.throws(() => withBlock('no markers', 'x', 'new'), /markers/);
});
