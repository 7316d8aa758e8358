// `npm run reference`: writes docs/reference/alpha-vantage-functions.md from the function list;
// `npm run reference -- --check` only says whether the file is current (exit 1 when it is not).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { REFERENCE_PATH, renderFunctionReference } from './reference/alpha-vantage-functions.js';

const text = renderFunctionReference();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(REFERENCE_PATH, 'utf8');
  } catch {}
  const same = current === text;
  process.stdout.write(same ? `${REFERENCE_PATH} is current\n` : `${REFERENCE_PATH} differs: run npm run reference\n`);
  process.exitCode = same ? 0 : 1;
} else {
  mkdirSync(dirname(REFERENCE_PATH), { recursive: true });
  writeFileSync(REFERENCE_PATH, text);
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}
