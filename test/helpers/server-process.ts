// The service as users start it (src/server.ts in its own process), with exactly the environment a test
// gives and nothing of the test runner's: settings read at process start (NODE_EXTRA_CA_CERTS) take effect,
// and no proxy variable of the machine leaks in. JSON logs are kept; stopped with SIGTERM at the end.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TestResponse, httpGet } from './app.js';
import { tempDir } from './config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  url: string;
  /** Every JSON log line so far. */
  readonly logs: Record<string, unknown>[];
  /** Everything written so far, stdout and stderr, as text (for secret scans). */
  output(): string;
  get(path: string): Promise<TestResponse>;
}

/** Starts the service with `env` on top of a minimal base (PATH, a private state directory, an ephemeral port, JSON logs). */
export async function startServerProcess(t: TestContext, env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: 'off',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      STATE_DIR: tempDir(t),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  });
  let text = '';
  const logs: Record<string, unknown>[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const started = new Promise<string>((resolve, reject) => {
    void exited.then(([code]) => reject(new Error(`the service exited with ${code} before listening:\n${text}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      text += `${line}\n`;
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.url === 'string' && typeof entry.mode === 'string') resolve(entry.url);
    });
  });
  const url = await started;
  return { url, logs, output: () => text, get: (path) => httpGet(url + path) };
}
