// The tools, in the order tools/list gives them, and each as tools/list shows it: self-contained (the REST
// schemas' shared parts inlined) and short, since a model reads the list in every session and it stays under
// 16 KB. docs/reference/mcp-tools.md is generated from the full schemas, and arguments are validated against
// them all the same (arguments.ts).
import type { Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js';
import { type TSchema, Type } from '@sinclair/typebox';
import { alphaVantage } from './alpha-vantage-tool.js';
import { getBrokerAccounts, getBrokerHealth, getBrokerPositions, getBrokerQuotes } from './broker-tools.js';
import { getIndicator } from './indicator-tool.js';
import { getDividends, getMarketOverview, getServiceStatus } from './market-tools.js';
import { getPriceHistory } from './price-history-tool.js';
import { getQuotes, searchSymbols } from './quote-tools.js';
import { Freshness } from './schemas.js';
import type { Tool } from './tool.js';
import { outputSchema } from './tool-result.js';

export const TOOLS: readonly Tool[] = [
  getQuotes,
  getPriceHistory,
  getIndicator,
  searchSymbols,
  getDividends,
  getMarketOverview,
  alphaVantage,
  getServiceStatus,
  getBrokerHealth,
  getBrokerAccounts,
  getBrokerPositions,
  getBrokerQuotes,
];

/**
 * The shared schemas a tool's schemas hold (the REST ones by `$ref`, the tools' own by `$id`), inlined whole
 * where a schema stands alone, and only named in tools/list.
 */
const SHARED: Readonly<Record<string, TSchema>> = { Freshness, ToolFreshness: Freshness };
const NAMED: Readonly<Record<string, TSchema>> = Object.fromEntries(
  Object.keys(SHARED).map((name) => [name, Type.Object({}, { description: Freshness.description })]),
);

/**
 * A schema standing alone: TypeBox's symbols dropped (JSON), the `shared` schemas inlined, no $id or $ref; the
 * reference page is written from it too (scripts/docs/mcp-tools.ts). @internal
 */
export function selfContained(schema: unknown, shared: Readonly<Record<string, TSchema>> = SHARED): unknown {
  if (Array.isArray(schema)) return schema.map((item) => selfContained(item, shared));
  if (schema === null || typeof schema !== 'object') return schema;
  const { $id, $ref, ...rest } = schema as Record<string, unknown>;
  const inlined = shared[String($ref ?? $id)];
  if (inlined !== undefined) {
    const { $id: _id, ...whole } = inlined;
    return { ...(selfContained(whole, {}) as object), description: rest.description ?? inlined.description };
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, selfContained(value, shared)]));
}

const LONG = { pattern: 120, enum: 50, answerDescription: 80 };

/**
 * A schema as tools/list sends it. Left out: descriptions below the first level of properties (of an answer,
 * long ones too), examples, and patterns and enums too long to read (each argument's description says it in
 * words, and an invalid value's error lists what is allowed); a union of literals is one enum, a nullable value
 * a type list. Of an answer, two levels only: deeper objects' properties, and what is required below the top.
 */
function listedSchema(schema: unknown, answer: boolean, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((item) => listedSchema(item, answer, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const { anyOf, ...node } = schema as Record<string, unknown>;
  const options = (Array.isArray(anyOf) ? anyOf : []) as Record<string, unknown>[];
  if (options.length > 1 && options.every((o) => o.const !== undefined && o.type === options[0]?.type))
    return listedSchema({ ...node, type: options[0]?.type, enum: options.map((o) => o.const) }, answer, depth);
  if (options.length > 1 && options.every((o) => Object.keys(o).length === 1 && typeof o.type === 'string'))
    return listedSchema({ ...node, type: options.map((o) => o.type) }, answer, depth);
  if (anyOf !== undefined) node.anyOf = anyOf;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'examples' || key === 'propertyNames' || key.startsWith('x-')) continue;
    if (key === 'description' && (depth > 1 || (answer && String(value).length > LONG.answerDescription))) continue;
    if ((key === 'pattern' && String(value).length > LONG.pattern) || (key === 'enum' && (value as unknown[]).length > LONG.enum)) continue;
    if (answer && depth > 0 && (key === 'required' || (key === 'additionalProperties' && value === false))) continue;
    if (key !== 'properties') out[key] = listedSchema(value, answer, depth);
    else if ((!answer || depth < 2) && Object.keys(value as object).length > 0)
      out[key] = Object.fromEntries(
        Object.entries(value as object).map(([name, property]) => [name, listedSchema(property, answer, depth + 1)]),
      );
  }
  return out;
}

export function listedTool(tool: Tool): ListedTool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: listedSchema(selfContained(tool.input), false) as ListedTool['inputSchema'],
    outputSchema: listedSchema(selfContained(outputSchema(tool.output, true), NAMED), true) as ListedTool['outputSchema'],
    annotations: { readOnlyHint: true },
  };
}
