// Node prints process warnings as plain text on stderr; here they become log lines like any other.
// node:sqlite is flagged experimental on Node 22 (not on 24) and warns once at load: that one is known
// and expected, so it is kept at debug rather than shown to every operator.
import type { Logger } from 'pino';

export function logProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    const expected = warning.name === 'ExperimentalWarning' && warning.message.startsWith('SQLite');
    logger[expected ? 'debug' : 'warn']({ warning: { name: warning.name, code: warning.code } }, warning.message);
  });
}
