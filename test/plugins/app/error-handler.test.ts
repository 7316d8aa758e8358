import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';

const LONG = 'x'.repeat(5_000);
const CUT = `${'x'.repeat(99)}…`;

test("a caller's value in a validation or not-found message is cut to 100 characters: an unknown parameter, an unmatched path", async (t) => {
  const { get } = await startApp(t);
  const unknown = await get(`/api/stream?${LONG}=1`);
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.message, `unknown parameter: ${CUT}`);
  const unmatched = await get(`/api/${LONG}`);
  assert.equal(unmatched.status, 404);
  assert.equal(unmatched.body.error.message, `no route for GET ${`/api/${LONG}`.slice(0, 99)}…`);
  for (const answer of [unknown, unmatched]) assert.ok(answer.text.length < 500, `${answer.text.length} bytes`);
});
