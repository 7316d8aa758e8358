// The security and pacing settings are validated at start, one clear line per problem.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/core/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  return [];
}

test('IBKR_REQUESTS_PER_SECOND: 8 by default, 1 to 9, never the gateway’s own 10', () => {
  assert.equal(loadConfig({}).broker.ibkr.requestsPerSecond, 8);
  assert.equal(loadConfig({ IBKR_REQUESTS_PER_SECOND: '5' }).broker.ibkr.requestsPerSecond, 5);
  for (const bad of ['10', '0', '8.5', 'fast'])
    assert.match(problems({ IBKR_REQUESTS_PER_SECOND: bad }).join(), /IBKR_REQUESTS_PER_SECOND must be a whole number from 1 to 9/, bad);
});

test('CURSOR_SECRET: unset by default, at least 32 characters when set', () => {
  assert.equal(loadConfig({}).cursorSecret, undefined);
  assert.equal(loadConfig({ CURSOR_SECRET: 'x'.repeat(32) }).cursorSecret, 'x'.repeat(32));
  const [problem] = problems({ CURSOR_SECRET: 'short-secret' });
  assert.match(problem ?? '', /CURSOR_SECRET must be at least 32 characters/);
  assert.ok(!problem?.includes('short-secret'), 'the secret itself is never echoed');
});
