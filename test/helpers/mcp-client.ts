// The official MCP SDK's client against a running service, over real HTTP on loopback: every answer it receives
// goes through the service's secret scan (test/helpers/app.ts), as the answers of `get` do.
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningApp } from './app.js';

export interface McpClientOptions {
  /** Sent on every request (a bearer token, an Origin). */
  headers?: Record<string, string>;
  /** The base URL of the service (default: the running app's); a function picks one per request (replicas behind a balancer). */
  base?: string | (() => string);
}

/** A connected client (initialize done), closed when the test ends. */
export async function mcpClient(
  t: TestContext,
  running: Pick<RunningApp, 'url' | 'scan'>,
  options: McpClientOptions = {},
): Promise<Client> {
  const base = options.base ?? running.url;
  const pick = typeof base === 'string' ? () => base : base;
  const scanned: typeof fetch = async (input, init) => {
    // The transport asks its one URL; the balancer (pick) sends each request to a service of its choice.
    const target = new URL(input instanceof Request ? input.url : String(input));
    const response = await fetch(new URL(target.pathname, pick()), init);
    const text = await response.clone().text();
    running.scan.response({ status: response.status, headers: Object.fromEntries(response.headers), body: undefined, text });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', pick()), {
    requestInit: { headers: options.headers ?? {} },
    fetch: scanned,
  });
  const client = new Client({ name: 'mdp-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

/** A tool call, its result typed as the SDK's schema reads it. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
