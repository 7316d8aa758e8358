// The Alpha Vantage functions page names its source, every function of the list once and every family's setting
// (that the page says what the code does is held by docs-reference.test.ts, with the other generated pages).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alphaVantageFunctionsReference } from '../../scripts/docs/alpha-vantage-functions.js';
import { AV_FAMILIES } from '../../src/core/config-schema.js';
import { FUNCTION_NAMES, FUNCTIONS_SOURCE } from '../../src/wire/alpha-vantage/functions.js';

test('the page names its source, every function once and every family setting', () => {
  const page = alphaVantageFunctionsReference();
  assert.ok(page.includes(FUNCTIONS_SOURCE.page) && page.includes(FUNCTIONS_SOURCE.read));
  for (const fn of FUNCTION_NAMES) assert.equal(page.split(new RegExp(`\\| \`${fn}\` +\\|`)).length, 2, fn);
  for (const family of Object.keys(AV_FAMILIES)) assert.ok(page.includes(`\`CACHE_AV_${family}_SECONDS\``), family);
});
