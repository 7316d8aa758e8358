// `npm start` as a process manager or container runtime uses it: SIGTERM goes to the npm process, and the
// server must get it itself, drain, log its shutdown line and exit, leaving no orphan behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('SIGTERM to `npm start` reaches the server, which drains, logs its shutdown and exits; npm exits 0', async (t) => {
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', STATE_DIR: tempDir(t) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.after(() => {
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
  });
  let stderr = '';
  npm.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const logs: Record<string, unknown>[] = [];
  const started = new Promise<Record<string, unknown>>((resolve, reject) => {
    void exited.then(([code]) => reject(new Error(`npm start exited with ${code} before listening: ${stderr}`)));
    createInterface({ input: npm.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.url === 'string' && typeof entry.mode === 'string') resolve(entry);
    });
  });
  const { url, pid } = (await started) as { url: string; pid: number };
  assert.notEqual(pid, npm.pid, 'the server is not npm itself');
  const ready = await fetch(`${url}/api/system/ready`);
  assert.equal(ready.status, 200);
  await ready.body?.cancel();

  npm.kill('SIGTERM');
  const [code, signal] = await exited;
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, stderr);
  assert.ok(
    logs.some((entry) => entry.msg === 'shutting down' && entry.signal === 'SIGTERM' && entry.pid === pid),
    'the server logged its shutdown',
  );
  assert.equal(alive(pid), false, 'no server left running');
});
