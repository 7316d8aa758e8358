// The parts of docs/reference/ written from the code rather than by hand: every setting of the configuration
// schema, every metric series of the registry, every Alpha Vantage function of the drop-in route, and every MCP
// tool. Each sits in its page between two markers; `npm run docs:generate` rewrites what is between them, and
// test/scripts/docs-reference.test.ts fails when a page and the code differ.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { EnvSchema, SECRET } from '../../src/core/config-schema.js';
import { alphaVantageFunctionsReference } from './alpha-vantage-functions.js';
import { mcpToolsReference } from './mcp-tools.js';
import { wrap } from './wrap.js';

const ROOT = join(import.meta.dirname, '..', '..');

const code = (value: unknown) => `\`${String(value)}\``;

interface SettingSchema {
  type?: string;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SettingSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  [SECRET]?: boolean;
}

function allowed(schema: SettingSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(code).join(', ')}`;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map(allowed).join(', or ');
  if (schema.const !== undefined) return code(schema.const);
  if (schema.type === 'integer') {
    return schema.maximum === undefined || schema.maximum >= Number.MAX_SAFE_INTEGER
      ? `an integer, ${schema.minimum ?? 0} or more`
      : `an integer from ${schema.minimum} to ${schema.maximum}`;
  }
  return schema.minLength === undefined ? 'text' : `text of ${schema.minLength} characters or more`;
}

interface Section {
  title: string;
  holds: (name: string) => boolean;
}

/** The page's sections, by name; a setting no rule claims belongs to the first, the service's own. */
const SECTIONS: Section[] = [
  { title: 'Service: listening, requests and logs', holds: () => false },
  { title: 'Provider A: Alpha Vantage', holds: (name) => name.startsWith('ALPHA_VANTAGE_') },
  { title: 'Provider B: Massive', holds: (name) => name.startsWith('MASSIVE_') },
  {
    title: 'Yahoo: the overview, the quote fallback and computed indicators',
    holds: (name) => /^(YAHOO|OVERVIEW)_/.test(name) || name === 'QUOTE_FALLBACK' || name === 'TECHNICAL_SOURCE',
  },
  { title: 'Broker', holds: (name) => /^(BROKER|IBKR_|TASTYTRADE_)/.test(name) },
  { title: 'Outbound proxy', holds: (name) => /^(HTTPS?|NO|ALL)_PROXY$/i.test(name) },
  {
    title: 'Shared state: Redis and the embedded store',
    holds: (name) => name.startsWith('REDIS_') || name === 'STATE_DIR' || name === 'CURSOR_SECRET',
  },
  { title: 'Cache', holds: (name) => name.startsWith('CACHE_') },
  { title: 'Stream', holds: (name) => name.startsWith('STREAM_') },
  { title: 'MCP: AI agents at /mcp', holds: (name) => name === 'MCP' || name.startsWith('MCP_') },
  { title: 'Metrics', holds: (name) => name.startsWith('METRICS_') },
];

/** Cache windows are many and alike: one table row each rather than a heading. */
const IN_TABLE = /^CACHE_.+_SECONDS$/;

function sectionOf(name: string): Section {
  return SECTIONS.find((section) => section.holds(name)) ?? (SECTIONS[0] as Section);
}

const NAMES = new Set(Object.keys(EnvSchema.properties));

/**
 * A description as Markdown: outside its code, setting names become links to their entries, and the characters
 * Markdown would read as HTML or emphasis (`<token>`, a bare `*`) are escaped, whoever wrote the description.
 */
export function descriptionMarkdown(description: string, self: string): string {
  // Odd pieces are inside backticks: code stays as written.
  return description
    .split('`')
    .map((piece, i) =>
      i % 2 === 1
        ? piece
        : piece
            .replace(/[<*]/g, (char) => (char === '<' ? '&lt;' : '\\*'))
            .replace(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, (name) =>
              NAMES.has(name) && name !== self ? `[${code(name)}](#${IN_TABLE.test(name) ? 'cache-windows' : name.toLowerCase()})` : name,
            ),
    )
    .join('`');
}

function settingText(name: string, schema: SettingSchema): string {
  const facts = [
    `- Default: ${schema.default === undefined ? 'unset' : code(schema.default)}`,
    `- Allowed: ${allowed(schema)}`,
    ...(schema[SECRET] === true ? ['- Secret: never logged and never shown in an answer or an error'] : []),
  ];
  return [`### ${code(name)}`, wrap(descriptionMarkdown(schema.description ?? '', name)), facts.join('\n')].join('\n\n');
}

function tableText(settings: [string, SettingSchema][]): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = settings.map(
    ([name, schema]) =>
      `| ${code(name)} | ${code(schema.default)} | ${cell(allowed(schema))} | ${cell(descriptionMarkdown(schema.description ?? '', name))} |`,
  );
  return ['### Cache windows', '', '| setting | default | allowed | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Every setting of the schema, by section, with its default, its allowed values and its description. */
export function configurationReference(): string {
  const settings = Object.entries(EnvSchema.properties as Record<string, SettingSchema>);
  const parts: string[] = [];
  for (const section of SECTIONS) {
    const mine = settings.filter(([name]) => sectionOf(name) === section);
    if (mine.length === 0) continue;
    parts.push(`## ${section.title}`);
    for (const [name, schema] of mine.filter(([name]) => !IN_TABLE.test(name))) parts.push(settingText(name, schema));
    const tabled = mine.filter(([name]) => IN_TABLE.test(name));
    if (tabled.length > 0) parts.push(tableText(tabled));
  }
  return parts.join('\n\n');
}

export interface MetricInfo {
  name: string;
  help: string;
  type: string;
  labelNames: readonly string[];
}

/** The metrics the app registers, as the registry lists them (prom-client's own and this service's). */
export function registryMetrics(app: FastifyInstance): MetricInfo[] {
  return app.metrics.registry.getMetricsAsArray().map((metric) => {
    const { name, help, type, labelNames } = metric as unknown as MetricInfo;
    return { name, help, type: String(type), labelNames: labelNames ?? [] };
  });
}

/** Metrics that are prom-client's defaults, documented by prom-client (and partly platform-dependent). */
export const STANDARD_METRIC = /^(process|nodejs)_/;

/** This service's own series (`mdp_*`), with their type, labels and meaning. */
export function metricsReference(metrics: readonly MetricInfo[]): string {
  const rows = metrics
    .filter((metric) => !STANDARD_METRIC.test(metric.name))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((metric) => {
      const labels = metric.labelNames.length === 0 ? 'none' : metric.labelNames.map(code).join(', ');
      const series =
        metric.type === 'histogram' ? `${code(metric.name)} (\`_bucket\` with \`le\`, \`_sum\`, \`_count\`)` : code(metric.name);
      return `| ${series} | ${metric.type} | ${labels} | ${metric.help.replaceAll('|', '\\|')} |`;
    });
  return ['| series | type | labels | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The generated blocks: which page holds each, and how to render it. */
export const GENERATED: { file: string; block: string; render: (app: FastifyInstance) => string }[] = [
  { file: 'docs/reference/configuration.md', block: 'configuration', render: () => configurationReference() },
  { file: 'docs/reference/metrics.md', block: 'metrics', render: (app) => metricsReference(registryMetrics(app)) },
  { file: 'docs/reference/alpha-vantage-functions.md', block: 'alpha-vantage-functions', render: () => alphaVantageFunctionsReference() },
  { file: 'docs/reference/mcp-tools.md', block: 'mcp-tools', render: () => mcpToolsReference() },
];

const begin = (block: string) => `<!-- generated: ${block} (npm run docs:generate writes what follows) -->`;
const end = (block: string) => `<!-- end of generated: ${block} -->`;

/** The text between a block's markers, or undefined when the page lacks them. */
export function blockOf(page: string, block: string): string | undefined {
  const start = page.indexOf(begin(block));
  const stop = page.indexOf(end(block));
  if (start < 0 || stop < start) return undefined;
  return page.slice(start + begin(block).length, stop).trim();
}

/** A page as the project's formatter writes it (Biome formats Markdown too: tables padded, and so on). */
export function formatted(file: string, page: string): string {
  const biome = spawnSync(join(ROOT, 'node_modules', '.bin', 'biome'), ['format', `--stdin-file-path=${file}`], {
    cwd: ROOT,
    input: page,
    encoding: 'utf8',
  });
  if (biome.status !== 0) throw new Error(`biome could not format ${file}: ${biome.stderr}`);
  return biome.stdout;
}

/** The page `npm run docs:generate` writes: the block replaced, then formatted. */
export function generatedPage(file: string, page: string, block: string, content: string): string {
  return formatted(file, withBlock(page, block, content));
}

export function withBlock(page: string, block: string, content: string): string {
  const start = page.indexOf(begin(block));
  const stop = page.indexOf(end(block));
  if (start < 0 || stop < start) throw new Error(`no "${begin(block)}" ... "${end(block)}" markers`);
  return `${page.slice(0, start)}${begin(block)}\n\n${content}\n\n${page.slice(stop)}`;
}
