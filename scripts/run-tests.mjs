// Runs every test file under test/ with Node's own runner, or those whose path holds one of the arguments
// (`node scripts/run-tests.mjs broker stream`), leaving the recorded fixtures out.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : find(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

const filter = process.argv.slice(2);
const files = find('test')
  .filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)))
  .sort();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
