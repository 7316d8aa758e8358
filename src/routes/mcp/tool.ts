// What an MCP tool is: a name, when to use it (its description, what tools/list shows an agent), its arguments
// and its answer as TypeBox schemas (one source for validation, tools/list and docs/reference/mcp-tools.md), and
// a run that reads through the same service method as its REST route: the same cache entry, single flight,
// budget, source and freshness. No tool places or changes anything.
import type { Static, TObject, TProperties } from '@sinclair/typebox';
import type { AppDeps } from '../../deps.js';
import type { SystemStatus } from '../../services/system-status-schema.js';

export interface ToolContext {
  deps: AppDeps;
  /** The broker rules admit this caller: it may hear the service's private side (errors' full words, the status's local view). */
  local: () => boolean;
  /** The service's status, as /api/system/status builds it for this caller. */
  status: () => Promise<SystemStatus>;
}

/** Where a long answer's rows are, and how an agent asks for the rest once some are left out. */
export interface Rows {
  /** The path of the rows in the structured content: an array, an object of rows (keyed by date or symbol), or CSV text. */
  path: readonly string[];
  /** One sentence, given how many rows were sent: which arguments ask for the rest (`limit`, `from`/`to`, a cursor). */
  hint: (returned: number) => string;
}

/** A tool's answer before it is sized: its structured content, where its rows are, and its short text. */
export interface ToolAnswer<T extends Record<string, unknown> = Record<string, unknown>> {
  content: T;
  rows?: Rows;
  /** A line saying what the content holds (the text a model reads first), of the content as sent (cut or not). */
  text: (content: T) => string;
}

export interface Tool<I extends TObject = TObject> {
  name: string;
  title: string;
  /** When to use it, in a sentence or two. */
  description: string;
  input: I;
  /** The properties of a successful answer; the output schema adds `error` and `truncated` (tool-result.ts). */
  output: TProperties;
  /** Listed and answered only for callers the broker rules admit (plugins/app/mcp-access.ts). */
  broker?: true;
  run(args: Static<I>, context: ToolContext): Promise<ToolAnswer<any>>;
}

/** An answer, its text typed by its content. */
export function answer<T extends Record<string, unknown>>(value: ToolAnswer<T>): ToolAnswer<T> {
  return value;
}

/** A tool, typed by its own input schema where it is written and erased to the common shape where it is listed. */
export function tool<I extends TObject>(definition: Tool<I>): Tool {
  return definition as unknown as Tool;
}
