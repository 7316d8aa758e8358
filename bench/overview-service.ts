// The service with its built-in sandbox on an ephemeral port, for overview benchmarks; prints its port.
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/core/config.js';
import { sandboxConfig, startSandbox } from '../src/sandbox/index.js';

const sandbox = await startSandbox();
const config = sandboxConfig(loadConfig({ ...process.env, DATA_MODE: 'sandbox' }), sandbox);
const app = await buildApp(config, { logger: pino({ level: 'warn' }) });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => sandbox.close())
    .then(() => process.exit(0));
});
