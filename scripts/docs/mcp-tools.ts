// The generated block of docs/reference/mcp-tools.md: every tool of /mcp with when to use it, its arguments and its
// answer, from the tools' own schemas (src/routes/mcp/). `npm run docs:generate` writes it (scripts/docs/reference.ts
// lists it); test/scripts/docs-reference.test.ts fails when it differs.
import { selfContained, TOOLS } from '../../src/routes/mcp/tools.js';
import { outputSchema } from '../../src/routes/mcp/tool-result.js';
import { wrap } from './wrap.js';

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  const?: unknown;
  description?: string;
}

const code = (value: unknown) => `\`${String(value)}\``;
/** An enum longer than this is counted, not listed: its argument's description says where the list is. */
const LONG_ENUM = 50;
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A schema's type in a few words: `one of …` for an enum, bounds where it has them. */
function typeOf(schema: Schema): string {
  if (schema.enum !== undefined)
    return schema.enum.length > LONG_ENUM ? `one of ${schema.enum.length} names` : `one of ${schema.enum.map(code).join(', ')}`;
  if (schema.const !== undefined) return code(schema.const);
  if (schema.anyOf !== undefined) {
    const literals = schema.anyOf.filter((option) => option.const !== undefined);
    if (literals.length === schema.anyOf.length) return `one of ${literals.map((option) => code(option.const)).join(', ')}`;
    return schema.anyOf.map(typeOf).join(' or ');
  }
  if (schema.type === 'array') {
    const count = schema.minItems !== undefined && schema.maxItems !== undefined ? ` (${schema.minItems} to ${schema.maxItems})` : '';
    return `array of ${schema.items === undefined ? 'values' : typeOf(schema.items)}${count}`;
  }
  if (schema.type === 'integer' && schema.minimum !== undefined && schema.maximum !== undefined)
    return `integer, ${schema.minimum} to ${schema.maximum}`;
  if (schema.type === 'object' && schema.properties !== undefined && Object.keys(schema.properties).length > 0)
    return `object (${Object.keys(schema.properties).map(code).join(', ')})`;
  return Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any value');
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

function argumentRows(input: Schema): string[][] {
  return Object.entries(input.properties ?? {}).map(([name, schema]) => {
    const required = input.required?.includes(name) && schema.default === undefined ? 'yes' : 'no';
    const said = schema.default === undefined || /\bdefault\b/.test(schema.description ?? '');
    const fallback = said ? '' : ` (default ${code(schema.default)})`;
    return [code(name), typeOf(schema), required, `${schema.description ?? ''}${fallback}`.trim() || '–'];
  });
}

function answerRows(output: Schema): string[][] {
  return Object.entries(output.properties ?? {})
    .filter(([name]) => name !== 'error' && name !== 'truncated')
    .map(([name, schema]) => [code(name), typeOf(schema), schema.description ?? '–']);
}

/** The block: one section per tool, in the order tools/list gives them. */
export function mcpToolsReference(): string {
  const sections = TOOLS.map((tool) => {
    const input = selfContained(tool.input) as Schema;
    const output = selfContained(outputSchema(tool.output)) as Schema;
    const args = argumentRows(input);
    return [
      `### ${code(tool.name)}`,
      '',
      wrap(
        `${tool.title}. ${tool.description}${tool.broker === true ? ' Listed, and answered, only for callers the broker rules admit.' : ''}`,
      ),
      '',
      ...(args.length === 0 ? ['No arguments.'] : table(['Argument', 'Type', 'Required', 'Meaning'], args)),
      '',
      'The answer (`structuredContent`):',
      '',
      ...table(['Field', 'Type', 'Meaning'], answerRows(output)),
    ].join('\n');
  });
  return [`${TOOLS.length} tools, all read-only.`, '', ...sections].join('\n\n').replaceAll('\n\n\n', '\n\n');
}
