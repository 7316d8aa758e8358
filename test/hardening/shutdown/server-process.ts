// The real entry point (src/server.ts: config, listen, close-with-grace) as a child process on port 0.
// Its JSON log lines are kept, so a test can read where it listens and what it said while stopping.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Parsed JSON log lines (stdout) and raw stderr lines, in arrival order. */
  logs: Record<string, unknown>[];
  /** Every stdout line as written. */
  raw: string[];
  stderr: string[];
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export async function startServer(t: TestContext, env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const logs: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${stderr.join('\n')}`)));
    lines.on('line', (line) => {
      raw.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (typeof entry.url === 'string' && typeof entry.mode === 'string') resolve(entry.url);
    });
  });
  return { url, port: Number(new URL(url).port), child, logs, raw, stderr, exited };
}
