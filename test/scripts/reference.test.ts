import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { REFERENCE_PATH, renderFunctionReference } from '../../scripts/reference/alpha-vantage-functions.js';
import { AV_FAMILIES } from '../../src/core/config-schema.js';
import { FUNCTION_NAMES, FUNCTIONS_SOURCE } from '../../src/wire/alpha-vantage/functions.js';

test(`${REFERENCE_PATH} is what npm run reference renders from the function list`, () => {
  assert.equal(readFileSync(REFERENCE_PATH, 'utf8'), renderFunctionReference(), 'run npm run reference and commit the file');
});

test('the page names its source, every function once and every family setting', () => {
  const page = renderFunctionReference();
  assert.ok(page.includes(FUNCTIONS_SOURCE.page) && page.includes(FUNCTIONS_SOURCE.read));
  for (const fn of FUNCTION_NAMES) assert.equal(page.split(new RegExp(`\\| \`${fn}\` +\\|`)).length, 2, fn);
  for (const family of Object.keys(AV_FAMILIES)) assert.ok(page.includes(`\`CACHE_AV_${family}_SECONDS\``), family);
});
