// The corpus on disk (test/fixtures/recorded/<provider>/): recordings.json, the body files beside it, and
// SOURCES.md, whose table is generated from recordings.json between two markers (the prose above and
// below it is written by hand). `npm run record` writes through here; the corpus test renders the same
// table and compares, so the two can never drift.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedRequest, Recording } from '../../test/helpers/recorded.js';

export type { RecordedRequest, Recording };

export const DEFAULT_CORPUS_DIR = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'recorded');

export const TABLE_START = '<!-- recordings table: generated from recordings.json by npm run record; do not edit -->';
export const TABLE_END = '<!-- end of recordings table -->';

const COLUMNS = ['name', 'request', 'status', 'origin', 'source', 'date', 'edits', 'notes'];

/** `GET /path?k=v&k2=v2 (body: …)`: the request as the table shows it (values unencoded, as recorded). */
export function describeRequest(request: RecordedRequest): string {
  const query = Object.entries(request.query ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const body =
    request.requestBody === undefined
      ? ''
      : ` (body: ${typeof request.requestBody === 'string' ? request.requestBody : JSON.stringify(request.requestBody)})`;
  return `${request.method} ${request.path}${query === '' ? '' : `?${query}`}${body}`;
}

/** A table cell: pipes escaped, line breaks folded (a cell is one line). */
function cell(value: string): string {
  return value.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

/** The SOURCES.md table of a recordings.json, header included, one line per recording, no trailing newline. */
export function renderTable(recordings: readonly Recording[]): string {
  const lines = [`| ${COLUMNS.join(' | ')} |`, `|${COLUMNS.map(() => '---').join('|')}|`];
  for (const r of recordings) {
    const cells = [`\`${r.body}\``, describeRequest(r.request), String(r.status), r.origin, r.source, r.date, r.edits, r.notes ?? ''];
    lines.push(`| ${cells.map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export class CorpusError extends Error {
  override name = 'CorpusError';
}

/** The text between the markers (the table), or an error naming the file when the markers are missing. */
export function tableOf(sources: string, file = 'SOURCES.md'): string {
  const start = sources.indexOf(TABLE_START);
  const end = sources.indexOf(TABLE_END);
  if (start < 0 || end < start)
    throw new CorpusError(`${file} has no generated table (the markers "${TABLE_START}" and "${TABLE_END}" are missing)`);
  return sources
    .slice(start + TABLE_START.length, end)
    .replace(/^\n+/, '')
    .replace(/\n+$/, '');
}

/** SOURCES.md with the table between its markers replaced; the prose around it is kept as it is. */
export function withTable(sources: string, table: string, file = 'SOURCES.md'): string {
  tableOf(sources, file);
  const start = sources.indexOf(TABLE_START) + TABLE_START.length;
  const end = sources.indexOf(TABLE_END);
  // Blank lines around the table: a Markdown table must not touch the comment lines.
  return `${sources.slice(0, start)}\n\n${table}\n\n${sources.slice(end)}`;
}

export function readRecordings(dir: string): Recording[] {
  const file = join(dir, 'recordings.json');
  if (!existsSync(file)) return [];
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Recording[];
  } catch (error) {
    throw new CorpusError(`${file} is not readable JSON: ${(error as Error).message}`);
  }
}

export function writeRecordings(dir: string, recordings: readonly Recording[]): void {
  writeFileSync(join(dir, 'recordings.json'), `${JSON.stringify(recordings, null, 2)}\n`);
}

/** Re-renders the table of `dir`/SOURCES.md from `recordings`; a missing SOURCES.md is started with a heading. */
export function writeSourcesTable(dir: string, provider: string, recordings: readonly Recording[]): void {
  const file = join(dir, 'SOURCES.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : `# Recorded answers: ${provider}\n\n${TABLE_START}\n${TABLE_END}\n`;
  writeFileSync(file, withTable(current, renderTable(recordings), file));
}

/**
 * Adds or replaces the entry of `entry.name`. A replaced entry keeps its place in the list, its body file
 * name and its notes (written by a person, about what the recording shows); a new one goes at the end.
 */
export function upsertRecording(
  recordings: readonly Recording[],
  entry: Recording,
): { recordings: Recording[]; existed: boolean; body: string } {
  const index = recordings.findIndex((r) => r.name === entry.name);
  if (index < 0) return { recordings: [...recordings, entry], existed: false, body: entry.body };
  const old = recordings[index] as Recording;
  const merged: Recording = { ...entry, body: old.body, notes: old.notes ?? entry.notes };
  if (merged.notes === undefined) delete merged.notes;
  const next = [...recordings];
  next[index] = merged;
  return { recordings: next, existed: true, body: old.body };
}
