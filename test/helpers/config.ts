// A validated configuration for tests: quiet logs, a private state directory, generous budgets and no
// quote fallback unless a test sets its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { type Config, loadConfig } from '../../src/core/config.js';

export function tempDir(t: TestContext, prefix = 'mdp-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function testConfig(t: TestContext, env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    DATA_MODE: 'sandbox',
    STATE_DIR: tempDir(t),
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '0',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
    MASSIVE_CALLS_PER_MINUTE: '0',
    YAHOO_CALLS_PER_MINUTE: '0',
    // Provider A's own behaviour unless a test asks for the fallback (test/routes/provider-a/quote-fallback.test.ts).
    QUOTE_FALLBACK: 'none',
    RATE_LIMIT_PER_MINUTE: '0',
    // Its own listener on an ephemeral port, so that apps in one process never collide.
    METRICS_PORT: '0',
    ...env,
  });
}
