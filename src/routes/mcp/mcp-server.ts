// One MCP server for one request: the official SDK's Server with the tools this caller may see. The SDK's
// low-level Server rather than its McpServer: McpServer takes zod schemas only, and the tools' schemas are
// TypeBox, the one schema language of the REST routes they share parameters with. The SDK handles the protocol
// (initialize and version negotiation, ping, JSON-RPC errors); this file lists the tools and answers calls.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ApiError } from '../../core/errors.js';
import type { ToolOutcome } from '../../plugins/app/mcp-metrics.js';
import { ajv, argumentsOf } from './arguments.js';
import type { Tool, ToolContext } from './tool.js';
import { errorResult, sizedResult } from './tool-result.js';
import { listedTool, TOOLS } from './tools.js';

const SERVER_INFO = { name: 'market-data-proxy', title: 'Market data proxy', version: '1.0.0' };

const INSTRUCTIONS =
  "Market data (quotes, price history, indicators, symbol search, dividends, fundamentals and the rest of Alpha Vantage's functions, a market overview, and the user's broker data where allowed) from one cache shared with every other caller of this service, under the providers' call budgets. Asking again is cheap: a cached answer costs no provider call. Every answer says where its values came from (source) and how fresh they are (freshness). A failed call answers isError with structuredContent.error { code, message, retryAfterSeconds?, action }: on QUOTA_EXHAUSTED or CALLER_SHARE_SPENT wait retryAfterSeconds (get_service_status says what each provider's budget has left). An answer too long to send is cut to whole rows and says so in structuredContent.truncated { rows, returned, leftOut, hint }.";

/** Built once: one Ajv for the tools' arguments and the SDK (an Ajv per server would cost a millisecond a request). */
const VALIDATOR = new AjvJsonSchemaValidator(ajv);
const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));
const LISTED = {
  withBroker: TOOLS.map(listedTool),
  public: TOOLS.filter((tool) => tool.broker !== true).map(listedTool),
};

export interface McpCaller {
  context: ToolContext;
  /** Why this caller may not see the broker tools, or undefined when it may (read once, when first needed). */
  brokerRefusal: () => ApiError | undefined;
  maxResultBytes: number;
  /** Told of every call of a known tool: its name, outcome and duration. */
  record: (tool: string, outcome: ToolOutcome, seconds: number) => void;
  /** Something unexpected failed a tool: to be logged; the caller sees INTERNAL_ERROR only. */
  failed: (error: unknown) => void;
}

export function mcpServer(caller: McpCaller): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: VALIDATOR,
  });
  // Without a broker (BROKER=none, or Tastytrade without credentials) its tools would only answer that: not listed.
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: caller.context.deps.broker.configured && caller.brokerRefusal() === undefined ? LISTED.withBroker : LISTED.public,
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const tool = BY_NAME.get(params.name);
    if (tool === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name.slice(0, 100)} (tools/list names them)`);
    const started = performance.now();
    const result = await called(tool, params.arguments, caller);
    caller.record(tool.name, result.isError === true ? 'error' : 'ok', (performance.now() - started) / 1000);
    return result;
  });
  return server;
}

/** A hidden broker tool is refused before any broker read; arguments are refused naming what is wrong. */
async function called(tool: Tool, raw: Record<string, unknown> | undefined, caller: McpCaller): Promise<CallToolResult> {
  try {
    const refusal = tool.broker === true ? caller.brokerRefusal() : undefined;
    if (refusal !== undefined) throw refusal;
    const answer = await tool.run(argumentsOf(tool.input, raw), caller.context);
    return sizedResult(answer, caller.maxResultBytes);
  } catch (error) {
    if (!(error instanceof ApiError)) caller.failed(error);
    return errorResult(error, caller.context.local());
  }
}
