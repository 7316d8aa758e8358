// Who may use /mcp and who may see its broker tools, judged on a request's facts alone (no socket): each rule's
// admission and refusal, the refusal saying what to configure.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { type TestContext, test } from 'node:test';
import { BrokerAccess, type CallerFacts } from '../../../src/broker/broker-access.js';
import { McpAccess } from '../../../src/plugins/app/mcp-access.js';
import { testConfig } from '../../helpers/config.js';

const MCP_TOKEN = 'mcp-token-of-32-characters-xxxxx';
const BROKER_TOKEN = 'broker-token-of-32-characters-xx';

function accessOf(t: TestContext, env: Record<string, string> = {}): McpAccess {
  const config = testConfig(t, env);
  return new McpAccess(config.mcp, new BrokerAccess(config.broker.access, config.trustProxy));
}

function facts(headers: IncomingHttpHeaders, ip = '127.0.0.1'): CallerFacts {
  return { ip, peer: ip, headers: { host: '127.0.0.1:3000', ...headers }, scheme: 'http' };
}

test("an Origin must be the service's own, a loopback page's or one MCP_ORIGINS lists; CORS_ORIGINS plays no part", (t) => {
  const access = accessOf(t, { CORS_ORIGINS: '*', MCP_ORIGINS: 'https://agent.example.com,http://tools.example.com:*' });
  for (const origin of [
    'http://127.0.0.1:3000',
    'http://localhost:6274',
    'http://[::1]:8080',
    'https://agent.example.com',
    'http://tools.example.com:81',
  ])
    assert.equal(access.refusal(facts({ origin })), undefined, origin);
  for (const origin of ['https://evil.example', 'http://127.0.0.1:3001.evil.example', 'null', 'https://agent.example.com:8443']) {
    const refusal = access.refusal(facts({ origin }));
    assert.equal(refusal?.code, 'MCP_FORBIDDEN', origin);
    assert.equal(refusal?.status, 403);
    assert.match(refusal?.message ?? '', /MCP_ORIGINS/);
  }
  assert.equal(access.allowsOrigin('https://agent.example.com'), true);
  assert.equal(access.allowsOrigin('https://evil.example'), false);
});

test('without a token, the Host must name the service: an address, a localhost name or a host of MCP_ORIGINS', (t) => {
  const access = accessOf(t, { MCP_ORIGINS: 'https://mcp.example.com' });
  for (const host of ['127.0.0.1:3000', '[::1]:3000', '10.0.0.5', 'localhost:3000', 'dev.localhost', 'mcp.example.com'])
    assert.equal(access.refusal(facts({ host })), undefined, host);
  for (const host of ['evil.example.com', 'mcp.example.com.evil.example'])
    assert.match(access.refusal(facts({ host }))?.message ?? '', /Host header/, host);
  // A rebound page's Origin is its own, and same-origin to itself: the Host refuses it.
  assert.equal(access.refusal(facts({ host: 'evil.example.com', origin: 'http://evil.example.com' }))?.status, 403);
  // A listed page is not a rebound one: it may call the service by any name.
  assert.equal(access.refusal(facts({ host: 'api.example.net', origin: 'https://mcp.example.com' })), undefined);
});

test('MCP_TOKEN: required of every request but a preflight; BROKER_TOKEN is taken too; a token admits any Host', (t) => {
  const access = accessOf(t, { MCP_TOKEN, BROKER_TOKEN });
  const missing = access.refusal(facts({}));
  assert.equal(missing?.status, 401);
  assert.equal(missing?.headers['www-authenticate'], 'Bearer realm="mcp"');
  const wrong = access.refusal(facts({ authorization: 'Bearer guess-guess-guess-guess' }));
  assert.equal(wrong?.status, 401);
  assert.match(wrong?.headers['www-authenticate'] ?? '', /invalid_token/);
  assert.ok(!wrong?.message.includes(MCP_TOKEN));
  for (const token of [MCP_TOKEN, BROKER_TOKEN])
    assert.equal(access.refusal(facts({ authorization: `Bearer ${token}`, host: 'mcp.example.com' })), undefined);
  assert.equal(access.refusal(facts({ origin: 'http://localhost:6274' }), true), undefined, 'a preflight carries no Authorization');
  assert.equal(access.refusal(facts({ origin: 'https://evil.example' }), true)?.status, 403, 'but its page is judged');
  // Without MCP_TOKEN a bearer is not asked for, and one that is no token of ours refuses nothing.
  assert.equal(accessOf(t).refusal(facts({ authorization: 'Bearer something-else-entirely' })), undefined);
});

test('the broker tools are for callers the broker routes admit: their networks, BROKER_TOKEN, their pages and Host rule', (t) => {
  const access = accessOf(t, { MCP_TOKEN, BROKER_TOKEN, BROKER_ALLOW_FROM: 'loopback' });
  assert.equal(access.brokerRefusal(facts({})), undefined, 'loopback');
  assert.equal(access.brokerRefusal(facts({ authorization: `Bearer ${MCP_TOKEN}` })), undefined, 'MCP_TOKEN: judged by the network');
  assert.equal(access.brokerRefusal(facts({ authorization: `Bearer ${BROKER_TOKEN}`, host: 'mcp.example.com' }, '203.0.113.7')), undefined);
  const remote = access.brokerRefusal(facts({ authorization: `Bearer ${MCP_TOKEN}` }, '203.0.113.7'));
  assert.equal(remote?.code, 'BROKER_FORBIDDEN');
  assert.match(remote?.message ?? '', /BROKER_ALLOW_FROM/);
  assert.equal(access.brokerRefusal(facts({ origin: 'https://agent.example.com' }))?.code, 'BROKER_FORBIDDEN', "not the broker's page");
  assert.equal(
    access.brokerRefusal(facts({ 'x-forwarded-for': '127.0.0.1' }, '203.0.113.7'))?.code,
    'BROKER_FORBIDDEN',
    'forwarded, untrusted',
  );
});
