// Waiting on a server's shutdown from a test: polled conditions, bounded so a broken build cannot hang the run.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves true once a fresh TCP connection to the port is refused. */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Polls until a fixed condition holds; the bound keeps a broken build from hanging the run. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
