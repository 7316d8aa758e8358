// Two instances on one host with default settings both start: a taken DEFAULT metrics port is a warning
// and the service goes on without its metrics listener; a taken METRICS_PORT that was set is still the
// one-line config error. Real sockets, and the real entry point (src/server.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultMetricsPortTaken } from '../src/process/listen-error.js';
import { tempDir } from './helpers/config.js';

const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const DEFAULT_METRICS_PORT = 9464;

/** Holds 127.0.0.1:`port` (0: any free one) for the test; when another process already has it, it is taken all the same. */
async function occupy(t: TestContext, port: number): Promise<number> {
  const server: Server = createServer();
  t.after(() => server.close());
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    server.once('error', resolve);
    server.listen(port, '127.0.0.1', () => resolve(undefined));
  });
  if (error !== undefined && error.code !== 'EADDRINUSE') throw error;
  return error === undefined ? (server.address() as { port: number }).port : port;
}

function start(t: TestContext, env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('METRICS_') && name !== 'STATE_DIR'));
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    env: {
      ...base,
      DATA_MODE: 'sandbox',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      STATE_DIR: tempDir(t),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const logs: Record<string, unknown>[] = [];
  const started = new Promise<Record<string, unknown> | undefined>((resolve) => {
    void exited.then(() => resolve(undefined));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.url === 'string' && typeof entry.mode === 'string') resolve(entry);
    });
  });
  return { child, exited, started, logs, stderr: () => stderr };
}

test('the warning names the port, the host and METRICS_PORT; none for a port that was set, or another failure', () => {
  const inUse = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
  assert.equal(
    defaultMetricsPortTaken(inUse, { host: '127.0.0.1', port: 9464 }, false),
    'metrics listener not started: port 9464 is in use on 127.0.0.1; set METRICS_PORT to another port, 0 for any free one, or off',
  );
  assert.equal(defaultMetricsPortTaken(inUse, { host: '127.0.0.1', port: 9464 }, true), undefined);
  assert.equal(
    defaultMetricsPortTaken(Object.assign(new Error('x'), { code: 'EACCES' }), { host: '127.0.0.1', port: 9464 }, false),
    undefined,
  );
});

test('the default metrics port taken: a warning, and the service starts, answers and stops cleanly without the listener', async (t) => {
  await occupy(t, DEFAULT_METRICS_PORT);
  const server = start(t, {});
  const entry = await server.started;
  assert.ok(entry, `the service did not start: ${server.stderr()}`);
  const warning = server.logs.find(
    (line) => line.level === 40 && typeof line.msg === 'string' && line.msg.startsWith('metrics listener not started'),
  );
  assert.equal(
    warning?.msg,
    `metrics listener not started: port ${DEFAULT_METRICS_PORT} is in use on 127.0.0.1; set METRICS_PORT to another port, 0 for any free one, or off`,
  );
  assert.equal(entry.metrics, `off (port ${DEFAULT_METRICS_PORT} in use)`);
  const ready = await fetch(`${String(entry.url)}/api/system/ready`);
  assert.equal(ready.status, 200);
  await ready.body?.cancel();
  server.child.kill('SIGTERM');
  const [code, signal] = await server.exited;
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.stderr());
  assert.equal(server.stderr(), '');
});

test('a METRICS_PORT that was set and is taken still stops the start with the one config error line', async (t) => {
  const port = await occupy(t, 0);
  const server = start(t, { METRICS_PORT: String(port) });
  assert.equal(await server.started, undefined, 'it must not start');
  const [code] = await server.exited;
  assert.equal(code, 1);
  assert.deepEqual(server.stderr().trim().split('\n'), [
    `config error: METRICS_PORT ${port} is already in use on 127.0.0.1 (another process listens there)`,
  ]);
});

test('METRICS_PORT set to the default port, taken: also the config error (it was chosen)', async (t) => {
  await occupy(t, DEFAULT_METRICS_PORT);
  const server = start(t, { METRICS_PORT: String(DEFAULT_METRICS_PORT) });
  const [code] = await server.exited;
  assert.equal(code, 1);
  assert.match(server.stderr(), new RegExp(`^config error: METRICS_PORT ${DEFAULT_METRICS_PORT} is already in use on 127\\.0\\.0\\.1`));
});
