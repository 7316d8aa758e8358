// POST /mcp over real HTTP on loopback: the SDK's client, and raw requests where the headers are the point (a
// foreign Origin, a rebound Host, a token). Stateless, so GET and DELETE are 405; an agent's calls share the
// cache, the per-caller limit and the budgets with every other caller; what an agent gets wrong, or a provider
// refuses, comes back as a result it can act on.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { request } from 'undici';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { type RunningApp, startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { callTool, mcpClient } from '../../helpers/mcp-client.js';

const ACCEPT = 'application/json, text/event-stream';
const initialize = (protocolVersion = '2025-11-25') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw POST /mcp through the running service's secret scan. */
async function post(running: RunningApp, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${running.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  running.scan.response({ status: res.statusCode, headers: res.headers, body: undefined, text });
  return { status: res.statusCode, headers: res.headers, body: text === '' ? undefined : JSON.parse(text), text };
}

test('initialize negotiates 2025-11-25 and 2025-06-18, stateless: no session id, and GET and DELETE are 405 in the error body', async (t) => {
  const running = await startApp(t, { transport: 'socket' });
  for (const version of ['2025-11-25', '2025-06-18']) {
    const res = await post(running, initialize(version));
    assert.equal(res.status, 200);
    assert.equal(res.body.result.protocolVersion, version);
    assert.equal(res.headers['mcp-session-id'], undefined, 'no session');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.body.result.capabilities, { tools: { listChanged: false } });
  }
  for (const method of ['GET', 'DELETE'] as const) {
    const res = await running.get('/mcp', { accept: 'text/event-stream' }, method as 'GET');
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.allow, 'POST, OPTIONS');
    assert.equal(res.body.error.code, 'METHOD_NOT_ALLOWED');
  }
  // A notification is accepted with no body.
  const accepted = await post(running, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(accepted.status, 202);
  assert.equal(accepted.text, '');
});

test('a foreign Origin gets 403 and no CORS grant, even under CORS_ORIGINS=*; its own origin, loopback pages and MCP_ORIGINS are served', async (t) => {
  const running = await startApp(t, { env: { CORS_ORIGINS: '*', MCP_ORIGINS: 'https://agent.example.com' }, transport: 'socket' });
  const foreign = await post(running, initialize(), { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403);
  assert.equal(foreign.body.error.code, 'MCP_FORBIDDEN');
  assert.match(foreign.body.error.message, /MCP_ORIGINS/);
  assert.equal(foreign.headers['access-control-allow-origin'], undefined);
  const preflight = await request(`${running.url}/mcp`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  await preflight.body.dump();
  assert.equal(preflight.statusCode, 403);
  assert.equal(preflight.headers['access-control-allow-origin'], undefined);

  const own = new URL(running.url).origin;
  for (const origin of [own, 'http://localhost:6274', 'https://agent.example.com']) {
    const res = await post(running, initialize(), { origin });
    assert.equal(res.status, 200, origin);
  }
  const listed = await request(`${running.url}/mcp`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://agent.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, mcp-protocol-version',
    },
  });
  await listed.body.dump();
  assert.equal(listed.statusCode, 204);
  assert.equal(listed.headers['access-control-allow-origin'], 'https://agent.example.com');
  assert.equal(listed.headers['access-control-allow-methods'], 'POST');
  assert.match(String(listed.headers['access-control-allow-headers']), /Mcp-Protocol-Version/);
  // The market routes keep their own policy.
  assert.equal((await running.get('/api/system/live', { origin: 'https://evil.example' })).headers['access-control-allow-origin'], '*');
});

test('a Host that names no address, localhost or MCP_ORIGINS host is refused (DNS rebinding); a token admits it', async (t) => {
  const token = 'mcp-token-of-32-characters-xxxxx';
  const open = await startApp(t, { transport: 'socket' });
  const rebound = await post(open, initialize(), { host: 'evil.example.com', origin: 'http://evil.example.com' });
  assert.equal(rebound.status, 403);
  assert.match(rebound.body.error.message, /Host/);
  assert.equal((await post(open, initialize(), { host: 'evil.example.com' })).status, 403, 'no Origin, a foreign Host');
  assert.equal((await post(open, initialize(), { host: 'localhost:3000' })).status, 200);

  const guarded = await startApp(t, { env: { MCP_TOKEN: token }, transport: 'socket' });
  assert.equal((await post(guarded, initialize(), { host: 'mcp.example.com', authorization: `Bearer ${token}` })).status, 200);
});

test('MCP_TOKEN: a missing or wrong token is 401 with WWW-Authenticate; MCP_TOKEN and BROKER_TOKEN are admitted', async (t) => {
  const token = 'mcp-token-of-32-characters-xxxxx';
  const brokerToken = 'broker-token-of-32-characters-xx';
  const running = await startApp(t, { env: { MCP_TOKEN: token, BROKER_TOKEN: brokerToken }, transport: 'socket' });
  const missing = await post(running, initialize());
  assert.equal(missing.status, 401);
  assert.equal(missing.headers['www-authenticate'], 'Bearer realm="mcp"');
  const wrong = await post(running, initialize(), { authorization: 'Bearer not-the-token-at-all' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers['www-authenticate'], 'Bearer realm="mcp", error="invalid_token"');
  assert.equal(wrong.body.error.code, 'MCP_FORBIDDEN');
  for (const bearer of [token, brokerToken])
    assert.equal((await post(running, initialize(), { authorization: `Bearer ${bearer}` })).status, 200);
  // The SDK's client with the token, as an agent's configuration sends it.
  const client = await mcpClient(t, running, { headers: { authorization: `Bearer ${token}` } });
  assert.ok((await client.listTools()).tools.length > 0);
});

test("the per-caller limit counts an agent's requests as it counts a page's", async (t) => {
  const running = await startApp(t, { env: { RATE_LIMIT_PER_MINUTE: '3' }, transport: 'socket' });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i += 1) statuses.push((await post(running, { jsonrpc: '2.0', id: i, method: 'ping' })).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const limited = await post(running, { jsonrpc: '2.0', id: 9, method: 'ping' });
  assert.equal(limited.body.error.code, 'RATE_LIMITED');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test('200 identical tool calls from 5 clients cost one provider call', async (t) => {
  const running = await startApp(t, { env: { ...UNCAPPED, ...NO_FALLBACK }, transport: 'socket' });
  const calls: SimRequestEvent[] = [];
  running.sandbox.alphaVantage.on('arrival', (event: SimRequestEvent) => calls.push(event));
  const clients = await Promise.all(Array.from({ length: 5 }, () => mcpClient(t, running)));
  const results = await Promise.all(
    clients.flatMap((client) => Array.from({ length: 40 }, () => callTool(client, 'get_quotes', { symbols: ['IBM'] }))),
  );
  assert.equal(results.length, 200);
  assert.ok(results.every((r) => r.isError !== true && (r.structuredContent as any).quotes[0].symbol === 'IBM'));
  assert.equal(new Set(results.map((r) => JSON.stringify(r.structuredContent))).size, 1, 'one answer');
  assert.deepEqual(
    calls.map((c) => c.query.get('function')),
    ['GLOBAL_QUOTE'],
  );
});

test('broker tools are hidden from and refused to a public caller, with no broker call; BROKER_TOKEN shows them; BROKER=none hides them', async (t) => {
  const brokerToken = 'broker-token-of-32-characters-xx';
  const running = await startApp(t, { env: { BROKER: 'ibkr', BROKER_ALLOW_FROM: 'none', BROKER_TOKEN: brokerToken }, transport: 'socket' });
  const brokerReads: string[] = [];
  running.sandbox.ibkr.on('request', (event: SimRequestEvent) => {
    if (/account|position|marketdata/.test(event.path)) brokerReads.push(event.path);
  });
  const isBroker = (name: string) => name.startsWith('get_broker_');
  const visitor = await mcpClient(t, running);
  const listed = (await visitor.listTools()).tools.map((tool) => tool.name);
  assert.deepEqual(listed.filter(isBroker), []);
  assert.equal(listed.length, 8);
  for (const name of ['get_broker_accounts', 'get_broker_positions', 'get_broker_quotes', 'get_broker_health']) {
    const refused = await callTool(visitor, name, name === 'get_broker_quotes' ? { symbols: ['AAPL'] } : {});
    assert.equal(refused.isError, true, name);
    assert.equal((refused.structuredContent as any).error.code, 'BROKER_FORBIDDEN');
    assert.match((refused.structuredContent as any).error.message, /BROKER_TOKEN/);
  }
  assert.deepEqual(brokerReads, [], 'no broker call for a refused caller');

  const owner = await mcpClient(t, running, { headers: { authorization: `Bearer ${brokerToken}` } });
  assert.equal((await owner.listTools()).tools.filter((tool) => isBroker(tool.name)).length, 4);
  const accounts = await callTool(owner, 'get_broker_accounts');
  assert.notEqual(accounts.isError, true);
  assert.ok(brokerReads.length > 0);

  // Without a broker, its tools are listed to no one; called anyway, they say so.
  const none = await startApp(t, { env: { BROKER: 'none' }, transport: 'socket' });
  const agent = await mcpClient(t, none);
  assert.deepEqual((await agent.listTools()).tools.map((tool) => tool.name).filter(isBroker), []);
  assert.equal(((await callTool(agent, 'get_broker_positions')).structuredContent as any).error.code, 'PROVIDER_NOT_CONFIGURED');
});

test('a cut answer says how many rows were left out and how to ask for the rest, within MCP_MAX_RESULT_BYTES', async (t) => {
  const running = await startApp(t, { env: { ...UNCAPPED, MCP_MAX_RESULT_BYTES: '4096' }, transport: 'socket' });
  const client = await mcpClient(t, running);
  const cut = await callTool(client, 'get_price_history', { symbol: 'IBM', limit: 100 });
  assert.ok(Buffer.byteLength(JSON.stringify(cut)) <= 4096);
  const { bars, truncated } = cut.structuredContent as any;
  assert.equal(truncated.rows, 'bars');
  assert.equal(truncated.returned, bars.length);
  assert.equal(truncated.returned + truncated.leftOut, 100);
  assert.ok(truncated.leftOut > 0);
  assert.match(truncated.hint, new RegExp(`limit=${truncated.returned}`));
  assert.match((cut.content[0] as { text: string }).text, new RegExp(`${truncated.leftOut} left out`));
  // As the hint says: that many fit whole, and the next ones are a narrower range away.
  const whole = await callTool(client, 'get_price_history', { symbol: 'IBM', limit: truncated.returned });
  assert.equal((whole.structuredContent as any).truncated, undefined);
  const older = await callTool(client, 'get_price_history', { symbol: 'IBM', limit: truncated.returned, to: bars.at(-1).time });
  assert.equal((older.structuredContent as any).bars[0].time, bars.at(-1).time);
});

test("what an agent gets wrong, or a provider refuses, is an error result naming the argument, the wait and what to do; arguments are read by the routes' one rule", async (t) => {
  const running = await startApp(t, { env: { ...NO_FALLBACK, ALPHA_VANTAGE_CALLS_PER_MINUTE: '1' }, transport: 'socket' });
  const client = await mcpClient(t, running);
  const error = async (name: string, args: Record<string, unknown>) => {
    const result = await callTool(client, name, args);
    assert.equal(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
    return { ...(result.structuredContent as any).error, text: (result.content[0] as { text: string }).text };
  };
  const indicator = await error('get_indicator', { symbol: 'IBM', indicator: 'NOPE' });
  assert.equal(indicator.code, 'INVALID_PARAMETER');
  assert.match(indicator.message, /^indicator must be one of: SMA, EMA/);
  assert.match((await error('get_quotes', {})).message, /^symbols is required/);
  assert.match(
    (await error('get_quotes', { symbols: ['IBM'], symbol: 'IBM' })).message,
    /unknown parameter: symbol; the arguments are symbols/,
  );
  assert.match(
    (await error('get_quotes', { symbols: ['I B M'] })).message,
    /^symbols has characters that are not allowed: Ticker symbol: letters/,
  );
  assert.match((await error('get_dividends', { cursor: 'x' })).message, /^cursor/);

  // The minute's one call goes to a symbol the provider does not know; asked again, the remembered answer (no call).
  assert.equal((await error('get_quotes', { symbols: ['ZZZZQ'] })).code, 'SYMBOL_NOT_FOUND');
  assert.equal((await error('get_quotes', { symbols: ['ZZZZQ'] })).code, 'SYMBOL_NOT_FOUND');
  const spent = await error('get_quotes', { symbols: ['MSFT'] });
  assert.equal(spent.code, 'QUOTA_EXHAUSTED');
  assert.ok(spent.retryAfterSeconds >= 1);
  assert.match(spent.text, /Retry after \d+ s\./);
  assert.match(spent.action, /get_service_status/);

  await assert.rejects(client.callTool({ name: 'place_order', arguments: {} }), /Unknown tool: place_order/);
});

test("a tool's arguments are read by the routes' one rule: an invisible character refused by name, spaces trimmed, case folded", async (t) => {
  const running = await startApp(t, { env: UNCAPPED, transport: 'socket' });
  const client = await mcpClient(t, running);
  const refused = await callTool(client, 'get_quotes', { symbols: ['IBM\u00a0'] });
  assert.match((refused.structuredContent as any).error.message, /^symbols contains U\+00A0 \(a no-break space\)/);
  const daily = await callTool(client, 'get_price_history', { symbol: ' IBM ', interval: 'Daily', limit: 2 });
  assert.deepEqual([(daily.structuredContent as any).symbol, (daily.structuredContent as any).interval], ['IBM', 'daily']);
  // The entry the REST route keys on that one spelling.
  assert.equal((await running.get('/api/provider-a/daily?symbol=IBM')).headers['x-cache'], 'HIT');
});

test('calls are counted per tool and outcome in /metrics and the status, and each request line names its tool', async (t) => {
  const running = await startApp(t, { transport: 'socket' });
  const client = await mcpClient(t, running);
  await callTool(client, 'get_quotes', { symbols: ['IBM'] });
  await callTool(client, 'get_indicator', { symbol: 'IBM', indicator: 'NOPE' });
  const metrics = (await running.scrape()).text;
  assert.match(metrics, /^mdp_mcp_tool_calls_total\{tool="get_quotes",outcome="ok"\} 1$/m);
  assert.match(metrics, /^mdp_mcp_tool_calls_total\{tool="get_indicator",outcome="error"\} 1$/m);
  assert.match(metrics, /^mdp_mcp_tool_call_duration_seconds_count\{tool="get_quotes"\} 1$/m);
  assert.match(metrics, /^mdp_mcp_sessions 0$/m);
  const status = (await running.get('/api/system/status')).body;
  assert.deepEqual(status.mcp, {
    sessions: 0,
    calls: 2,
    errors: 1,
    tools: { get_quotes: { calls: 1, errors: 0 }, get_indicator: { calls: 1, errors: 1 } },
  });
  const lines = running.scan.lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && line.url === '/mcp');
  assert.deepEqual(lines.map((line) => line.tool).filter(Boolean), ['get_quotes', 'get_indicator']);
});

test('MCP=off: no /mcp route, and the status says so', async (t) => {
  const running = await startApp(t, { env: { MCP: 'off' }, transport: 'socket' });
  assert.equal((await post(running, initialize())).status, 404);
  assert.equal((await running.get('/api/system/status')).body.mcp, null);
});

test("client keys: a key with the mcp scope is admitted where MCP_TOKEN is required, one without it is 403, and a broker key sees the broker tools; each agent's calls are its own client's", async (t) => {
  const sha = (key: string) => createHash('sha256').update(key).digest('hex');
  const agent = 'agent-key-0123456789abcdef';
  const owner = 'owner-key-0123456789abcdef';
  const pages = 'pages-key-0123456789abcdef';
  const CLIENT_KEYS = [
    `agent sha256=${sha(agent)} scopes=mcp`,
    `owner sha256=${sha(owner)} scopes=mcp,broker`,
    `pages sha256=${sha(pages)} scopes=market`,
  ].join(';');
  const running = await startApp(t, {
    env: { CLIENT_KEYS, MCP_TOKEN: 'mcp-token-of-32-characters-xxxxx', BROKER: 'ibkr', BROKER_ALLOW_FROM: 'none', LOG_LEVEL: 'info' },
    transport: 'socket',
  });
  assert.equal((await post(running, initialize(), { authorization: `Bearer ${agent}` })).status, 200);
  const outOfScope = await post(running, initialize(), { authorization: `Bearer ${pages}` });
  assert.equal(outOfScope.status, 403);
  assert.equal(outOfScope.body.error.code, 'CLIENT_KEY_FORBIDDEN');
  assert.equal((await post(running, initialize(), { authorization: 'Bearer no-such-key-0123456789' })).status, 401);
  const isBroker = (name: string) => name.startsWith('get_broker_');
  const plain = await mcpClient(t, running, { headers: { authorization: `Bearer ${agent}` } });
  assert.deepEqual((await plain.listTools()).tools.map((tool) => tool.name).filter(isBroker), []);
  const trusted = await mcpClient(t, running, { headers: { authorization: `Bearer ${owner}` } });
  assert.equal((await trusted.listTools()).tools.filter((tool) => isBroker(tool.name)).length, 4);
  assert.notEqual((await callTool(trusted, 'get_broker_accounts')).isError, true);
  const lines = running.scan.lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && line.url === '/mcp');
  assert.ok(
    lines.some((line) => line.client === 'owner') && lines.some((line) => line.client === 'agent'),
    'the request line names the client',
  );
});
