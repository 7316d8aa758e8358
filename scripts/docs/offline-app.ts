// The service built as `npm start` builds it, but neither listening nor calling anything: for the scripts that
// read what it declares (its OpenAPI document, its metrics) rather than what it answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/core/config.js';

export async function withOfflineApp<T>(use: (app: FastifyInstance) => Promise<T>): Promise<T> {
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-docs-'));
  try {
    // Sandbox mode needs no key, and nothing here asks an upstream; BROKER=none keeps the broker's keep-alive
    // and its quote feed from dialling a gateway. The routes, the document and the metrics are the same.
    const config = loadConfig({ DATA_MODE: 'sandbox', BROKER: 'none', LOG_LEVEL: 'silent', METRICS_PORT: 'off', STATE_DIR: stateDir });
    const app = await buildApp(config);
    try {
      await app.ready();
      return await use(app);
    } finally {
      await app.close();
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
