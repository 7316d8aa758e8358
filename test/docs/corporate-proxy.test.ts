// docs/how-to/corporate-proxy.md, run as written: its `sh` blocks in order, with bash, against the providers
// behind a real proxy (test/helpers/providers-behind-proxy.ts) that wants the page's credentials. Only the
// page's placeholders are replaced: the proxy's address, the CA file and the service's port (the page's
// 3000 may be taken on a shared machine). The block that runs `npm start` is left running; every other block's
// output must equal the `json` block that follows it (a documented "…" stands for a value that changes per
// request). Before the block that shows a refused password, the proxy's password changes, as the page says.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/config.js';
import { KEYS, providersBehindProxy } from '../helpers/providers-behind-proxy.js';
import { freePort } from '../store/redis-topology.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = 'docs/how-to/corporate-proxy.md';

interface Block {
  lang: string;
  text: string;
  /** The prose since the previous block. */
  before: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let last = 0;
  for (const match of markdown.matchAll(fence)) {
    out.push({ lang: match[1] as string, text: match[2] as string, before: markdown.slice(last, match.index) });
    last = (match.index as number) + match[0].length;
  }
  return out;
}

/** A documented value "…" matches any value there. */
function matches(actual: unknown, documented: unknown): boolean {
  if (documented === '…') return true;
  if (Array.isArray(documented))
    return Array.isArray(actual) && actual.length === documented.length && documented.every((d, i) => matches(actual[i], d));
  if (documented !== null && typeof documented === 'object') {
    const a = actual as Record<string, unknown>;
    return (
      actual !== null &&
      typeof actual === 'object' &&
      Object.keys(a).length === Object.keys(documented).length &&
      Object.entries(documented).every(([key, value]) => matches(a[key], value))
    );
  }
  return actual === documented;
}

/** The JSON values of a text, one after the other (jq prints one per line; the page may spread one over lines). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '{' || c === '[') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}

test(`${PAGE}: its commands, run as written, print what it shows`, async (t) => {
  const page = blocks(readFileSync(`${ROOT}/${PAGE}`, 'utf8'));
  const sh = page.filter((b) => b.lang === 'sh');
  assert.ok(sh.length >= 3, 'a start and at least two checks');
  const credentials = /export HTTPS_PROXY=http:\/\/(\w+):(\w+)@/.exec(sh[0]?.text ?? '');
  assert.ok(credentials !== null, 'the start block sets HTTPS_PROXY with credentials');
  const { proxy, ca } = await providersBehindProxy(t, {
    credentials: { user: credentials[1] as string, password: credentials[2] as string },
  });
  const port = await freePort();
  const fill = (text: string) =>
    text
      .replaceAll('proxy.example.com:3128', proxy.address)
      .replaceAll('/etc/ssl/certs/corporate-ca.pem', ca.caFile)
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`);
  // "your usual settings": the keys and the broker, in the environment here rather than in a .env file.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tempDir(t),
    ...KEYS,
    BROKER: 'tastytrade',
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: 'off',
    LOG_FORMAT: 'json',
    STATE_DIR: tempDir(t),
  };

  for (const [i, block] of page.entries()) {
    if (block.lang !== 'sh') continue;
    const command = fill(block.text);
    if (/^npm start$/m.test(command)) {
      const service = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const exited = once(service, 'exit');
      t.after(async () => {
        if (service.exitCode !== null || service.signalCode !== null) return;
        process.kill(-(service.pid as number), 'SIGTERM');
        await exited;
      });
      let stderr = '';
      service.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        void exited.then(([code]) => reject(new Error(`the page's start exited with ${code}:\n${stderr}`)));
        createInterface({ input: service.stdout }).on('line', (line) => {
          if (line.includes('"mode"') && line.includes('"url"')) resolve();
        });
      });
      continue;
    }
    if (/refuses the user name and password/.test(block.before))
      proxy.requireCredentials({ user: 'mdp', password: 'changed-at-the-proxy' });
    const expected = page[i + 1];
    assert.equal(expected?.lang, 'json', `block ${i} is followed by its output`);
    const { stdout } = await promisify(execFile)('bash', ['-c', command], { cwd: ROOT, env });
    const printed = jsonValues(stdout);
    const documented = jsonValues(fill(expected.text));
    assert.ok(
      matches(printed, documented),
      `${command}\nprinted:    ${JSON.stringify(printed)}\ndocumented: ${JSON.stringify(documented)}`,
    );
  }
  assert.ok(proxy.tunnelsTo('www.alphavantage.co') >= 1, 'the quote was asked of the proxy');
});
