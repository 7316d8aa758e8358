// The examples a page shows, read with a Markdown parser (mdast-util-from-markdown, the one remark uses). The
// convention every page follows, so that a test can run what it shows:
// - A `sh` block holding a `curl` command is an example: one command per block (lines may continue with `\`).
// - The next code block is its answer, as the reader will see it:
//   - `json`: the body; the status is 200, or the `status` of an error body (`{"error":{"status":...}}`);
//   - `http`: the status line (`HTTP/1.1 403 Forbidden`), then the headers worth showing (a value of `…`
//     means "varies": the header must be there, any value), then a blank line and the body, if any;
//   - `text`: Server-Sent Events (`event:` and `data:` lines), for a stream that stays open.
//   A body shows a shape: the answer must hold every key path it shows, with the same JSON types (values vary).
// - `<!-- examples-env: NAME=value NAME="a value" -->` anywhere in a page: the settings the page's examples run
//   under (a token the page sets, another broker). The reader sets them as the page says.
// - `<!-- examples-run-by: test/….test.ts -->`: a page whose commands need more than the sandbox (a proxy in
//   between) names the test that runs them as written; the generic runner leaves that page to it.
import { fromMarkdown } from 'mdast-util-from-markdown';
import { shapeOf } from '../helpers/wire-shape.js';

export interface ExpectedAnswer {
  status: number;
  /** Headers the page shows: a value of undefined ("…") means any value. */
  headers: [string, string | undefined][];
  /** The body shown, when it is JSON. */
  body?: unknown;
  /** The events shown, for a stream. */
  events?: { event: string; data: unknown }[];
}

export interface CurlExample {
  line: number;
  command: string;
  answer: ExpectedAnswer;
}

export interface PageExamples {
  env: Record<string, string>;
  /** The test that runs this page's commands itself, if the page names one. */
  runBy?: string;
  examples: CurlExample[];
  /** What breaks the convention: a test fails on each. */
  problems: string[];
}

interface Node {
  type: string;
  lang?: string | null;
  value?: string;
  position?: { start: { line: number } };
  children?: Node[];
}

const SHELL = new Set(['sh', 'bash', 'shell']);
const ENV_DIRECTIVE = /^<!--\s*examples-env:\s*([\s\S]*?)\s*-->$/;
const RUN_BY_DIRECTIVE = /^<!--\s*examples-run-by:\s*(\S+)\s*-->$/;

function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

/** The command a block holds, lines joined, or a problem. */
function commandOf(block: string): string | { problem: string } {
  const lines = block.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  const commands: string[][] = [];
  for (const line of lines) {
    const last = commands.at(-1);
    if (last?.at(-1)?.trimEnd().endsWith('\\')) last.push(line);
    else commands.push([line]);
  }
  if (commands.length !== 1) return { problem: `a curl example holds one command (found ${commands.length})` };
  const command = (commands[0] as string[]).join('\n');
  return /^curl\s/.test(command.trim()) ? command.trim() : { problem: 'a block with a curl command holds nothing else' };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not JSON: ${(error as Error).message}`);
  }
}

function statusOfBody(body: unknown): number {
  const status = (body as { error?: { status?: unknown } } | null)?.error?.status;
  return typeof status === 'number' ? status : 200;
}

function events(text: string): { event: string; data: unknown }[] {
  const found: { event: string; data: unknown }[] = [];
  for (const chunk of text.split(/\n\s*\n/)) {
    const event = /^event: (.+)$/m.exec(chunk)?.[1];
    const data = /^data: (.+)$/m.exec(chunk)?.[1];
    if (event !== undefined && data !== undefined) found.push({ event, data: parseJson(data, `the data of event ${event}`) });
  }
  if (found.length === 0) throw new Error('a text answer shows Server-Sent Events: event: and data: lines');
  return found;
}

function answerOf(lang: string, text: string): ExpectedAnswer {
  if (lang === 'json') {
    const body = parseJson(text, 'the answer');
    return { status: statusOfBody(body), headers: [], body };
  }
  if (lang === 'text') return { status: 200, headers: [], events: events(text) };
  const [head = '', ...rest] = text.split(/\n\s*\n/);
  const [statusLine = '', ...headerLines] = head.split('\n');
  const status = /^HTTP\/[\d.]+ (\d{3})\b/.exec(statusLine)?.[1];
  if (status === undefined) throw new Error(`an http answer starts with its status line, not "${statusLine}"`);
  const headers = headerLines.map((line): [string, string | undefined] => {
    const colon = line.indexOf(':');
    if (colon < 1) throw new Error(`not a header line: "${line}"`);
    const value = line.slice(colon + 1).trim();
    return [line.slice(0, colon).trim(), value === '…' ? undefined : value];
  });
  const bodyText = rest.join('\n\n').trim();
  const answer: ExpectedAnswer = { status: Number(status), headers };
  if (bodyText === '') return answer;
  if (/^(event|id|retry|data):/m.test(bodyText)) return { ...answer, events: events(bodyText) };
  return { ...answer, body: parseJson(bodyText, 'the answer body') };
}

export function pageExamples(markdown: string): PageExamples {
  const env: Record<string, string> = {};
  const examples: CurlExample[] = [];
  const problems: string[] = [];
  let runBy: string | undefined;
  const nodes: Node[] = [];
  walk(fromMarkdown(markdown) as Node, (node) => {
    if (node.type === 'code' || node.type === 'html') nodes.push(node);
  });
  nodes.forEach((node, i) => {
    const line = node.position?.start.line ?? 0;
    const value = node.value ?? '';
    if (node.type === 'html') {
      runBy ??= RUN_BY_DIRECTIVE.exec(value.trim())?.[1];
      const directive = ENV_DIRECTIVE.exec(value.trim());
      // NAME=value pairs; a value with spaces in double quotes (its runs of white space, line breaks too, one space).
      for (const [, name = '', quoted, plain] of (directive?.[1] ?? '').matchAll(/([A-Za-z0-9_]+)=(?:"([^"]*)"|(\S*))/g)) {
        env[name] = quoted === undefined ? (plain ?? '') : quoted.replace(/\s+/g, ' ');
      }
      return;
    }
    if (!SHELL.has(node.lang ?? '') || !/(^|\n)\s*curl\s/.test(value)) return;
    const command = commandOf(value);
    if (typeof command !== 'string') {
      problems.push(`line ${line}: ${command.problem}`);
      return;
    }
    const next = nodes.slice(i + 1).find((candidate) => candidate.type === 'code');
    if (next === undefined || !['json', 'http', 'text'].includes(next.lang ?? '')) {
      problems.push(`line ${line}: the curl example is not followed by its answer (a json, http or text block)`);
      return;
    }
    try {
      examples.push({ line, command, answer: answerOf(next.lang as string, next.value ?? '') });
    } catch (error) {
      problems.push(`line ${next.position?.start.line ?? line}: ${(error as Error).message}`);
    }
  });
  return { env, ...(runBy === undefined ? {} : { runBy }), examples, problems };
}

/** Where an answer lacks a key path the page shows, or has it with another JSON type ([] when it has the shape). */
export function shapeProblems(shown: unknown, answered: unknown): string[] {
  const have = shapeOf(answered);
  const problems: string[] = [];
  for (const [path, types] of shapeOf(shown)) {
    const got = have.get(path);
    if (got === undefined) problems.push(`${path} is not in the answer`);
    else for (const type of types) if (!got.has(type)) problems.push(`${path} is ${[...got].join('/')} in the answer, ${type} on the page`);
  }
  return problems;
}
