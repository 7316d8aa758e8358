// One service replica as its own process, for multi-process and restart tests: configuration from the
// environment (a Redis prefix or a state directory, and the Alpha Vantage URL of a shared simulator).
// Prints "LISTENING <port>" once it accepts requests.
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/core/config.js';

const config = loadConfig({ LOG_LEVEL: 'silent', BROKER: 'none', RATE_LIMIT_PER_MINUTE: '0', ...process.env });
const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`LISTENING ${(app.server.address() as { port: number }).port}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
