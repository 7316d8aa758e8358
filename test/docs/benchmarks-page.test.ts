// Every figure in docs/benchmarks.md sits under the command that produced it, with the machine and the date: a
// section (## or ###) that shows a figure has its own `- Command:`, `- Machine:` and `- Date:` lines, or its ##
// section's. A command must name a benchmark file or an npm script that exists. The page's opening, before the
// first section, shows no figure.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './pages.js';

/** A measured quantity: a number with a unit of time, size, share or ratio. */
const FIGURE = /\d(?:[\d,.]*\d)?\s?(?:ms|µs|s|%|×|KiB|MiB|MB|GB)(?![A-Za-z])/;

interface Section {
  title: string;
  depth: number;
  lines: string[];
}

function sections(markdown: string): { opening: string[]; sections: Section[] } {
  const opening: string[] = [];
  const found: Section[] = [];
  let inCode = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const heading = inCode ? null : /^(#{2,3}) (.+)$/.exec(line);
    if (heading) found.push({ title: heading[2] as string, depth: (heading[1] as string).length, lines: [] });
    else (found.at(-1)?.lines ?? opening).push(line);
  }
  return { opening, sections: found };
}

/** The lines that are not a Command, Machine or Date line, without their code spans. */
function prose(lines: string[]): string {
  return lines
    .filter((line) => !/^- (Command|Machine|Date):/.test(line))
    .join('\n')
    .replace(/`[^`]*`/g, '');
}

function hasFigure(lines: string[]): boolean {
  const text = prose(lines);
  // A table row with a digit is a figure too (counts, ratios).
  return FIGURE.test(text) || text.split('\n').some((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line) && /\d/.test(line));
}

const field = (lines: string[], name: string) => lines.filter((line) => line.startsWith(`- ${name}: `));

function commandExists(command: string, scripts: Record<string, string>): boolean {
  const files = [...command.matchAll(/\bbench\/[\w-]+\.ts\b/g)].map((m) => m[0]);
  const npmScripts = [...command.matchAll(/\bnpm run ([\w:-]+)/g)].map((m) => m[1] as string);
  if (files.length === 0 && npmScripts.length === 0) return false;
  return files.every((file) => existsSync(join(ROOT, file))) && npmScripts.every((name) => name in scripts);
}

test('every figure on the benchmarks page sits under its command, machine and date', () => {
  const { opening, sections: all } = sections(readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8'));
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.ok(!FIGURE.test(prose(opening)), 'the opening shows no figure');
  let parent: Section | undefined;
  let measured = 0;
  for (const section of all) {
    if (section.depth === 2) parent = section;
    const own = (name: string) => field(section.lines, name);
    const inherited = (name: string) => (own(name).length > 0 || section.depth === 2 ? own(name) : field(parent?.lines ?? [], name));
    const commands = inherited('Command');
    for (const line of commands) {
      const command = /`([^`]+)`/.exec(line)?.[1] ?? '';
      assert.ok(commandExists(command, scripts), `${section.title}: "${command}" names no existing bench file or npm script`);
    }
    if (!hasFigure(section.lines)) continue;
    measured += 1;
    assert.ok(commands.length > 0, `${section.title}: figures without a Command line`);
    const machine = inherited('Machine')[0] ?? '';
    assert.ok(machine.length > 12 && !/not yet recorded/.test(machine), `${section.title}: figures without the machine`);
    const date = /^- Date: (\d{4}-\d{2}-\d{2})/.exec(inherited('Date')[0] ?? '')?.[1];
    assert.ok(date !== undefined && !Number.isNaN(Date.parse(date)), `${section.title}: figures without a date`);
  }
  assert.ok(measured >= 10, `${measured} sections with figures`);
});
