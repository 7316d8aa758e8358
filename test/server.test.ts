// The real entry point (src/server.ts) started from a directory of its own, to see what it reads
// from `.env` there and how it fails on a STATE_DIR it cannot use.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/config.js';

const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Starts the server in `cwd`; resolves with its exit code and output, or kills it once it listens. */
async function run(cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'STATE_DIR'));
  const child = spawn(process.execPath, ['--import', TSX, SERVER], {
    cwd,
    env: { ...base, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let signalled = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    // Once: a second SIGTERM (a later chunk before the exit) makes the server exit at once with code 1.
    if (!signalled && stdout.includes('"msg":"market data proxy started')) {
      signalled = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

test('a STATE_DIR that cannot be created fails the start at once, in one line naming STATE_DIR', async (t) => {
  const { code, stderr } = await run(tempDir(t), { STATE_DIR: '/proc/x/state' });
  assert.equal(code, 1);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(
    stderr,
    /^failed to start: cannot open the embedded store at \/proc\/x\/state\/state\.db \(set STATE_DIR to a writable directory\)/,
  );
});

test('.env in the working directory is read at start, and the environment wins over it', async (t) => {
  const cwd = tempDir(t);
  writeFileSync(join(cwd, '.env'), 'STATE_DIR=/proc/x/state\nDATA_MODE=sandbox\n');
  const fromFile = await run(cwd, {});
  assert.equal(fromFile.code, 1);
  assert.match(fromFile.stderr, /STATE_DIR/);

  const fromEnv = await run(cwd, { STATE_DIR: tempDir(t) });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  assert.match(fromEnv.stdout, /started in SANDBOX mode/);
  assert.match(fromEnv.stdout, /"msg":"shutting down"/);
});

test('TRUST_PROXY=true: the start log warns that any caller can choose its address; off loopback the start is refused in one line', async (t) => {
  const onLoopback = await run(tempDir(t), { STATE_DIR: tempDir(t), TRUST_PROXY: 'true' });
  assert.equal(onLoopback.code, 0, onLoopback.stderr);
  const warning = onLoopback.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; trustProxy?: unknown })
    .find((line) => line.trustProxy === true);
  assert.equal(warning?.level, 40, 'a warning');
  assert.match(warning?.msg ?? '', /any caller can choose its own address for the per-caller limit and the stream caps/);

  const exposed = await run(tempDir(t), { STATE_DIR: tempDir(t), TRUST_PROXY: 'true', HOST: '0.0.0.0' });
  assert.equal(exposed.code, 1);
  assert.equal(exposed.stderr.trim().split('\n').length, 1, exposed.stderr);
  assert.match(exposed.stderr, /^config error: TRUST_PROXY=true .*TRUST_PROXY_ANY=yes/);
});
