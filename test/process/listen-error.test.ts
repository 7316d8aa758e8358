import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { test, type TestContext } from 'node:test';
import { listenProblem, METRICS_ADDRESS } from '../../src/process/listen-error.js';
import { tempDir } from '../helpers/config.js';

/** The error node:net itself gives for this listen, or undefined when it listens. */
async function listenError(t: TestContext, port: number, host: string): Promise<Error | undefined> {
  const server: Server = createServer();
  t.after(() => server.close());
  return new Promise((resolve) => {
    server.once('error', resolve);
    server.listen(port, host, () => resolve(undefined));
  });
}

test('each listen failure is one line naming HOST or PORT', async (t) => {
  const unresolvable = await listenError(t, 0, '999.1.1.1');
  assert.match(
    listenProblem(unresolvable, { host: '999.1.1.1', port: 0 }) ?? '',
    /^HOST 999\.1\.1\.1 is not an address or a name that resolves/,
  );

  const notOurs = await listenError(t, 0, '192.0.2.1'); // TEST-NET-1: no machine has it
  assert.match(listenProblem(notOurs, { host: '192.0.2.1', port: 0 }) ?? '', /^HOST 192\.0\.2\.1 is not an address of this machine/);

  const first = createServer().listen(0, '127.0.0.1');
  t.after(() => first.close());
  await once(first, 'listening');
  const { port } = first.address() as { port: number };
  const taken = await listenError(t, port, '127.0.0.1');
  assert.equal(
    listenProblem(taken, { host: '127.0.0.1', port }),
    `PORT ${port} is already in use on 127.0.0.1 (another process listens there)`,
  );
  assert.match(listenProblem(taken, { host: '127.0.0.1', port }, METRICS_ADDRESS) ?? '', /^METRICS_PORT \d+ is already in use/);

  // root may bind low ports; EACCES is then shown with the errno code node gives for it.
  const privileged =
    process.getuid?.() === 0 ? Object.assign(new Error('listen EACCES'), { code: 'EACCES' }) : await listenError(t, 80, '127.0.0.1');
  assert.match(listenProblem(privileged, { host: '127.0.0.1', port: 80 }) ?? '', /^PORT 80 needs privileges/);

  assert.equal(listenProblem(new Error('something else'), { host: '127.0.0.1', port }), undefined);
});

test('the real entry point with HOST=999.1.1.1 stops with one config error line and exit code 1', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, DATA_MODE: 'sandbox', HOST: '999.1.1.1', PORT: '0', LOG_LEVEL: 'silent', STATE_DIR: tempDir(t) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = await once(child, 'close');
  assert.deepEqual(stderr.trim().split('\n'), [
    'config error: HOST 999.1.1.1 is not an address or a name that resolves (e.g. 127.0.0.1, 0.0.0.0, ::)',
  ]);
  assert.equal(code, 1);
});
