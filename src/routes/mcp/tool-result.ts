// A tool's answer as an MCP result: its structured content with a short text, cut to MCP_MAX_RESULT_BYTES at
// whole rows (saying how many were left out and how to ask for the rest), or an error result an agent can act on.
// Any ApiError maps to one generic shape (its code, message and wait, and a sentence on what to do by code), so a
// code added to core/errors.ts reaches agents with no change here; never a stack, a path or a key.
import { KindGuard, type TObject, type TProperties, Type } from '@sinclair/typebox';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../core/errors.js';
import { ToolError, Truncated } from './schemas.js';
import type { Rows, ToolAnswer } from './tool.js';

/** What to do about an error, by code; a code not listed gets the default, by whether it says when to retry. */
const WHAT_TO_DO: Readonly<Record<string, string>> = {
  MISSING_PARAMETER: 'Call again with the argument the message names.',
  INVALID_PARAMETER: 'Call again with the argument corrected as the message says.',
  SYMBOL_NOT_FOUND: 'Look the symbol up with search_symbols, then call again with one it lists.',
  NOT_FOUND: 'Look the symbol up with search_symbols, then call again with one it lists.',
  BROKER_FORBIDDEN: 'Broker data is not for this caller: the operator can allow its network or give it BROKER_TOKEN.',
  RATE_LIMITED: 'This caller sent too many requests: wait, then call again.',
  QUOTA_EXHAUSTED: "The provider's call budget is spent: wait (get_service_status says when calls return); cached answers stay available.",
  CALLER_SHARE_SPENT: 'This caller has spent its share of the provider budget: wait; answers already cached stay available.',
  PROVIDER_NOT_CONFIGURED: 'This service cannot answer it as configured (a key, a plan or a source): do not retry; try another tool.',
  UPSTREAM_ERROR: 'The provider failed: try again later, or see its state with get_service_status.',
  UPSTREAM_TIMEOUT: 'The provider did not answer in time: try again in a little while.',
  BROKER_UNAVAILABLE: 'The broker is not connected: get_broker_health says why.',
  SHUTTING_DOWN: 'This instance is stopping: call again, another one answers.',
  INTERNAL_ERROR: 'The service failed unexpectedly: try again; if it persists, tell its operator.',
};

function whatToDo(error: ApiError): string {
  return WHAT_TO_DO[error.code] ?? (error.retryAfterSeconds === undefined ? 'Do not call again unchanged.' : 'Wait, then call again.');
}

/**
 * A tool's output schema: its answer's properties, or `error` alone; `truncated` when it was cut. tools/list sends
 * the `brief` one: the answer's properties, none required, any other admitted (every tool's `error` and
 * `truncated` are the same, and the server's instructions describe them once).
 */
export function outputSchema(properties: TProperties, brief = false): TObject {
  const answer = Type.Partial(Type.Object(properties)).properties;
  if (brief) return Type.Object(answer);
  const required = Object.entries(properties)
    .filter(([, schema]) => !KindGuard.IsOptional(schema))
    .map(([name]) => name);
  return Type.Object(
    { ...answer, truncated: Type.Optional(Truncated), error: Type.Optional(ToolError) },
    { additionalProperties: false, anyOf: [{ required }, { required: ['error'] }] },
  );
}

/**
 * An error's code, message and wait, as the REST error body and Retry-After say them to this caller: the full
 * words to a `local` one (the broker rules admit it), the public words to anyone else. Anything not an ApiError
 * is INTERNAL_ERROR.
 */
export function errorFields(error: unknown, local: boolean): { code: string; message: string; retryAfterSeconds?: number } {
  const failure = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'internal error');
  const { code, retryAfterSeconds } = failure;
  return {
    code,
    message: local ? failure.message : failure.publicMessage,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
}

/** An error as a tool result: the REST error's code, message (in this caller's words) and wait, and what to do. */
export function errorResult(error: unknown, local: boolean): CallToolResult {
  const fields = errorFields(error, local);
  const action = error instanceof ApiError ? whatToDo(error) : (WHAT_TO_DO.INTERNAL_ERROR as string);
  const wait = fields.retryAfterSeconds === undefined ? '' : ` Retry after ${fields.retryAfterSeconds} s.`;
  return {
    isError: true,
    content: [{ type: 'text', text: `${fields.code}: ${sentence(fields.message)}${wait} ${action}` }],
    structuredContent: { error: { ...fields, action } },
  };
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

function rendered(content: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: content };
}

const size = (result: CallToolResult) => Buffer.byteLength(JSON.stringify(result));

/**
 * The answer as a result of at most `maxBytes` of JSON: whole, or with the latest rows that fit (a binary search
 * over how many) and `truncated` saying how many were left out and how to ask for the rest.
 */
export function sizedResult(answer: ToolAnswer, maxBytes: number): CallToolResult {
  const whole = rendered(answer.content, answer.text(answer.content));
  if (size(whole) <= maxBytes) return whole;
  const rows = answer.rows;
  const total = rows === undefined ? 0 : countRows(valueAt(answer.content, rows.path));
  let best: CallToolResult | undefined;
  let low = 0;
  let high = total - 1;
  while (rows !== undefined && low <= high) {
    const kept = Math.floor((low + high) / 2);
    const result = cut(answer, rows, kept, total);
    if (size(result) <= maxBytes) {
      best = result;
      low = kept + 1;
    } else high = kept - 1;
  }
  return (
    best ??
    errorResult(
      new ApiError('INVALID_PARAMETER', `the answer is larger than this service sends to agents (${maxBytes} bytes) even without its rows`),
      false,
    )
  );
}

function cut(answer: ToolAnswer, rows: Rows, kept: number, total: number): CallToolResult {
  const content = withValueAt(answer.content, rows.path, firstRows(valueAt(answer.content, rows.path), kept));
  const truncated = { rows: rows.path.join('.'), returned: kept, leftOut: total - kept, hint: rows.hint(kept) };
  const text = `${answer.text(content)} Cut to fit: ${kept} of ${total} rows sent, ${truncated.leftOut} left out. ${truncated.hint}`;
  return rendered({ ...content, truncated }, text);
}

function valueAt(content: Record<string, unknown>, path: readonly string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], content);
}

function withValueAt(content: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const [key, ...rest] = path as [string, ...string[]];
  return { ...content, [key]: rest.length === 0 ? value : withValueAt(content[key] as Record<string, unknown>, rest, value) };
}

/** Rows are array items, the entries of an object of rows, or the lines of CSV text after its header. */
function countRows(rows: unknown): number {
  if (Array.isArray(rows)) return rows.length;
  if (typeof rows === 'string') return Math.max(0, csvLines(rows).length - 1);
  return rows !== null && typeof rows === 'object' ? Object.keys(rows).length : 0;
}

function firstRows(rows: unknown, kept: number): unknown {
  if (Array.isArray(rows)) return rows.slice(0, kept);
  if (typeof rows === 'string')
    return `${csvLines(rows)
      .slice(0, kept + 1)
      .join('\r\n')}\r\n`;
  return Object.fromEntries(Object.entries(rows as object).slice(0, kept));
}

function csvLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line !== '');
}
