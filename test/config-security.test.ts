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

test('TRUST_PROXY believing any peer is refused at start off loopback, in one line naming the risk, unless TRUST_PROXY_ANY=yes', () => {
  for (const trust of ['true', '1', '3']) {
    const refused = problems({ HOST: '0.0.0.0', TRUST_PROXY: trust });
    assert.equal(refused.length, 1, refused.join('\n'));
    assert.match(
      refused[0] ?? '',
      /any caller can choose its own address .*set TRUST_PROXY to the proxy's address, or TRUST_PROXY_ANY=yes if only that proxy can reach HOST=0\.0\.0\.0$/,
      trust,
    );
    assert.deepEqual(problems({ HOST: '0.0.0.0', TRUST_PROXY: trust, TRUST_PROXY_ANY: 'yes' }), [], trust);
  }
  // On loopback (warned at start, src/server.ts), or naming the proxy anywhere: accepted as before.
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadConfig({ HOST: '127.0.0.1', TRUST_PROXY: '1' }).trustProxy, 1);
  assert.equal(loadConfig({ HOST: '0.0.0.0', TRUST_PROXY: '172.29.80.2' }).trustProxy, '172.29.80.2');
  assert.equal(loadConfig({ HOST: '::', TRUST_PROXY: '0' }).trustProxy, 0, 'a hop count of 0 believes nobody');
  assert.match(problems({ TRUST_PROXY_ANY: 'maybe' }).join(), /TRUST_PROXY_ANY must be one of 1, true, yes, on, 0, false, no, off/);
});

test('MCP: on by default, read in the words every other switch takes (a `false` or `no` does not stop the start)', () => {
  assert.equal(loadConfig({}).mcp.enabled, true);
  for (const off of ['off', 'false', 'no', '0']) assert.equal(loadConfig({ MCP: off }).mcp.enabled, false, off);
  for (const on of ['on', 'true', 'yes', '1']) assert.equal(loadConfig({ MCP: on }).mcp.enabled, true, on);
  assert.match(problems({ MCP: 'maybe' }).join(), /MCP/);
});
