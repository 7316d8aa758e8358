// Every curl example in the README and docs/ runs against the sandbox, as the reader would run it: the real
// curl, through sh, on the service listening on a real port (test/helpers/app.ts) and, for the pages that
// talk to a simulator or the gateway directly, on the simulators. Only the address changes: the page's
// `http://127.0.0.1:3000` (or compose's `:8080`) becomes the test's service, `:9464` its metrics listener,
// `https://localhost:5000` the simulated IBKR gateway and the `npm run sandbox` ports (SANDBOX_PORT_BASE=4100)
// the simulators. Each answer must have the status, the headers and the shape the page shows (the convention
// is in markdown-examples.ts). A page's examples run in its order, on one service of their own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { type RunningApp, startApp } from '../helpers/app.js';
import { type CurlExample, type ExpectedAnswer, pageExamples, shapeProblems } from './markdown-examples.js';
import { documentationPages, ROOT } from './pages.js';

/** Options every curl run gets, as a reader's own ~/.curlrc would give them: headers shown, errors said. */
const CURLRC = ['silent', 'show-error', 'include', 'max-time = 30', ''].join('\n');

function addresses(running: RunningApp): [RegExp, string][] {
  const { sandbox } = running;
  const metrics = running.metricsUrl === undefined ? running.url : new URL(running.metricsUrl).origin;
  return [
    [/https?:\/\/(?:127\.0\.0\.1|localhost):(?:3000|8080)(?![0-9])/g, running.url],
    [/http:\/\/(?:127\.0\.0\.1|localhost):9464(?![0-9])/g, metrics],
    [/https:\/\/(?:127\.0\.0\.1|localhost):(?:5000|4103)(?![0-9])/g, sandbox.ibkr.origin],
    [/http:\/\/(?:127\.0\.0\.1|localhost):4100(?![0-9])/g, sandbox.alphaVantage.origin],
    [/http:\/\/(?:127\.0\.0\.1|localhost):4101(?![0-9])/g, sandbox.massive.origin],
    [/http:\/\/(?:127\.0\.0\.1|localhost):4102(?![0-9])/g, sandbox.yahoo.origin],
    [/http:\/\/(?:127\.0\.0\.1|localhost):4104(?![0-9])/g, sandbox.tastytrade.origin],
  ];
}

interface CurlAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
  events: { event: string; data: string }[];
}

/** The last header block of curl's `--include` output (a `100 Continue` comes before the real one). */
function parseHead(output: string): { status: number; headers: Map<string, string>; rest: string } | undefined {
  let text = output;
  for (;;) {
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1]);
    text = text.slice(end + 4);
    if (status === 100) continue;
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    return { status, headers, rest: text };
  }
}

/** Runs the command through sh; a stream is read until every event the page shows has come, then closed. */
function runCurl(command: string, env: Record<string, string>, expected: ExpectedAnswer): Promise<CurlAnswer> {
  const wanted = new Set(expected.events?.map((e) => e.event));
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `exec ${command}`], { env });
    let output = '';
    let errors = '';
    const events: CurlAnswer['events'] = [];
    let fed = 0;
    const parser = createParser({ onEvent: (message) => events.push({ event: message.event ?? 'message', data: message.data }) });
    const finish = () => {
      const head = parseHead(output);
      if (head === undefined) reject(new Error(`no HTTP answer from: ${command}\n${errors}`));
      else resolve({ status: head.status, headers: head.headers, body: head.rest, events });
    };
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no answer within 30 s (events seen: ${events.map((e) => e.event).join(', ') || 'none'}): ${command}`));
    }, 30_000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (errors += chunk));
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (expected.events === undefined) return;
      const head = parseHead(output);
      if (head === undefined) return;
      parser.feed(head.rest.slice(fed));
      fed = head.rest.length;
      if ([...wanted].every((name) => events.some((e) => e.event === name))) {
        clearTimeout(timer);
        child.kill();
        finish();
      }
    });
    child.on('close', () => {
      clearTimeout(timer);
      finish();
    });
  });
}

function check(page: string, example: CurlExample, answer: CurlAnswer): void {
  const where = `${page}:${example.line}: ${example.command}`;
  const { status, headers, body, events } = example.answer;
  assert.equal(answer.status, status, `${where}\nanswered ${answer.status}: ${answer.body.slice(0, 400)}`);
  for (const [name, value] of headers) {
    const got = answer.headers.get(name.toLowerCase());
    assert.ok(got !== undefined, `${where}\nno ${name} header in the answer`);
    if (value !== undefined) assert.equal(got, value, `${where}\n${name}`);
  }
  if (body !== undefined) {
    let parsed: unknown;
    assert.doesNotThrow(() => (parsed = JSON.parse(answer.body)), `${where}\nthe answer is not JSON: ${answer.body.slice(0, 300)}`);
    assert.deepEqual(shapeProblems(body, parsed), [], `${where}\n${answer.body.slice(0, 600)}`);
  }
  for (const shown of events ?? []) {
    const arrived = answer.events.find((e) => e.event === shown.event);
    assert.ok(arrived !== undefined, `${where}\nno ${shown.event} event`);
    assert.deepEqual(
      shapeProblems(shown.data, JSON.parse(arrived.data)),
      [],
      `${where}\nevent ${shown.event}: ${arrived.data.slice(0, 600)}`,
    );
  }
}

const all = documentationPages().map((page) => ({ page, ...pageExamples(readFileSync(join(ROOT, page), 'utf8')) }));
const pages = all.filter((p) => p.runBy === undefined);

test('the pages show curl examples, each followed by its answer', () => {
  const problems = pages.flatMap(({ page, problems }) => problems.map((problem) => `${page}: ${problem}`));
  assert.deepEqual(problems, []);
  for (const { page, runBy } of all.filter((p) => p.runBy !== undefined)) {
    assert.ok(existsSync(join(ROOT, runBy as string)), `${page} is run by ${runBy}, which exists`);
  }
  assert.ok(pages.find((p) => p.page === 'README.md')?.examples.length, 'the README tour has a curl example');
});

for (const { page, env, examples } of pages.filter((p) => p.examples.length > 0)) {
  test(`${page}: every curl example answers as the page shows`, async (t) => {
    const running = await startApp(t, { env });
    const home = mkdtempSync(join(tmpdir(), 'mdp-curl-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    writeFileSync(join(home, '.curlrc'), CURLRC);
    const shellEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CURL_HOME: home, ...env };
    for (const example of examples) {
      const command = addresses(running).reduce((text, [from, to]) => text.replace(from, to), example.command);
      check(page, example, await runCurl(command, shellEnv, example.answer));
    }
  });
}
