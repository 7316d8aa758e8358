// `npm run docs:generate`: rewrites the generated parts of docs/reference/ (every setting of the configuration
// schema, every metric series) from the code. Run it after adding or changing a setting or a metric; the tests
// fail until the pages say what the code does (test/scripts/docs-reference.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withOfflineApp } from './docs/offline-app.js';
import { GENERATED, generatedPage } from './docs/reference.js';

const ROOT = join(import.meta.dirname, '..');

await withOfflineApp(async (app) => {
  for (const { file, block, render } of GENERATED) {
    const path = join(ROOT, file);
    const before = readFileSync(path, 'utf8');
    const after = generatedPage(file, before, block, render(app));
    if (after !== before) writeFileSync(path, after);
    process.stdout.write(`${file}: ${after === before ? 'unchanged' : 'rewritten'}\n`);
  }
});
