// The configuration snippets of docs/how-to/connect-an-ai-agent.md, read as each client reads its own: the JSON
// parses in the client's layout, the address is the service's /mcp, and the headers are the ones /mcp takes: the
// service, started with the page's MCP_TOKEN, answers the SDK client's initialize and tools/list with them, and
// refuses the same request without them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { request } from 'undici';
import { startApp } from '../helpers/app.js';
import { mcpClient } from '../helpers/mcp-client.js';
import { pageExamples } from './markdown-examples.js';
import { ROOT } from './pages.js';

const PAGE = 'docs/how-to/connect-an-ai-agent.md';
const CLIENTS = ['Claude Code', 'Claude Desktop', 'VS Code', 'Cursor'];

interface Node {
  type: string;
  depth?: number;
  lang?: string | null;
  value?: string;
  children?: Node[];
}

interface Connection {
  client: string;
  url: string;
  headers: Record<string, string>;
}

/** The code blocks under each `###` heading of the page. */
function blocksByHeading(markdown: string): Map<string, { lang: string; value: string }[]> {
  const found = new Map<string, { lang: string; value: string }[]>();
  let current: string | undefined;
  const text = (node: Node): string => node.value ?? (node.children ?? []).map(text).join('');
  for (const node of (fromMarkdown(markdown) as Node).children ?? []) {
    if (node.type === 'heading') current = node.depth === 3 ? text(node) : undefined;
    else if (node.type === 'code' && current !== undefined)
      found.set(current, [...(found.get(current) ?? []), { lang: node.lang ?? '', value: node.value ?? '' }]);
  }
  return found;
}

/** `Name: value` (a command line's --header) or `Name:value` (mcp-remote's). */
function header(text: string): [string, string] {
  const colon = text.indexOf(':');
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

/** Each snippet as the address and headers its client would send, its variables filled as the client fills them. */
function connections(client: string, blocks: { lang: string; value: string }[], token: string): Connection[] {
  return blocks.map(({ lang, value }) => {
    if (lang === 'sh') {
      const match = /^claude mcp add --transport http \S+ (\S+) --header "([^"]+)"$/.exec(value.trim());
      assert.ok(match, `${client}: the command reads as claude mcp add --transport http <name> <url> --header "…"`);
      return { client, url: match[1] as string, headers: Object.fromEntries([header(match[2] as string)]) };
    }
    assert.equal(lang, 'json', `${client}: a json snippet`);
    const config = JSON.parse(value);
    const servers = Object.values(config.mcpServers ?? config.servers ?? {}) as Record<string, any>[];
    assert.equal(servers.length, 1, `${client}: one server`);
    const server = servers[0] as Record<string, any>;
    if (server.command === 'npx') {
      // mcp-remote: the URL, then --header Name:value with ${VAR} from the server's env.
      const args = server.args as string[];
      assert.ok(args.includes('mcp-remote'), `${client}: mcp-remote`);
      const at = args.indexOf('--header');
      const filled = (args[at + 1] as string).replace(/\$\{(\w+)\}/g, (_, name: string) => server.env[name]);
      return { client, url: args.find((arg) => arg.startsWith('http')) as string, headers: Object.fromEntries([header(filled)]) };
    }
    if (client !== 'Cursor') assert.equal(server.type, 'http', `${client}: the http transport`);
    // VS Code's ${input:…}: asked of the user, who types the token.
    const headers = Object.fromEntries(
      Object.entries(server.headers as Record<string, string>).map(([name, v]) => [name, v.replace(/\$\{input:[\w-]+\}/g, token)]),
    );
    for (const input of config.inputs ?? []) assert.equal(input.password, true, `${client}: the token is asked as a password`);
    return { client, url: server.url as string, headers };
  });
}

test('every agent configuration on the page reaches /mcp with the headers it takes, and none works without them', async (t) => {
  const markdown = readFileSync(join(ROOT, PAGE), 'utf8');
  const { env } = pageExamples(markdown);
  const token = env.MCP_TOKEN as string;
  assert.ok(token !== undefined && token.length >= 16, 'the page sets MCP_TOKEN for its examples');
  const running = await startApp(t, { env: { MCP_TOKEN: token }, transport: 'socket' });
  const blocks = blocksByHeading(markdown);
  const found = CLIENTS.flatMap((client) => connections(client, blocks.get(client) ?? [], token));
  assert.deepEqual([...new Set(found.map((c) => c.client))], CLIENTS, 'a snippet for each client');

  for (const { client, url, headers } of found) {
    const target = new URL(url);
    assert.equal(target.pathname, '/mcp', `${client}: the path`);
    assert.equal(target.origin, 'http://127.0.0.1:3000', `${client}: the address the page uses throughout`);
    assert.deepEqual(Object.keys(headers), ['Authorization'], `${client}: the header /mcp reads`);
    assert.equal(headers.Authorization, `Bearer ${token}`, `${client}: the bearer token`);
    const agent = await mcpClient(t, running, { headers });
    assert.ok(
      (await agent.listTools()).tools.some((tool) => tool.name === 'get_quotes'),
      `${client}: tools listed`,
    );
  }
  const bare = await request(`${running.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
    }),
  });
  await bare.body.dump();
  assert.equal(bare.statusCode, 401, 'without the header, refused');
});
