// Child processes for benchmarks: the server under test never shares an event loop with the load generator.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node --import tsx <script>` and resolves once it prints its port. */
export async function startChild(script: string, env: Record<string, string>, portPattern: RegExp): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const match = portPattern.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The service on an ephemeral port, in sandbox mode, with a private state directory. */
export function startService(env: Record<string, string>): Promise<Child> {
  return startChild('src/server.ts', { PORT: '0', DATA_MODE: 'sandbox', LOG_LEVEL: 'info', ...env }, /"url":"https?:\/\/[^:]+:(\d+)"/);
}
