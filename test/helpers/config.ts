// A validated configuration for tests: the production defaults, with quiet logs, the sandbox and a private
// state directory. A test that needs otherwise says so where it runs (UNCAPPED, NO_FALLBACK, or its own).
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
    // Its own listener on an ephemeral port, so that apps in one process never collide.
    METRICS_PORT: '0',
    ...env,
  });
}

/**
 * For a test about what the service does with answers rather than what it spends on them: no call budget,
 * no pacing and no per-caller limit, so that its many calls are neither refused nor spaced out.
 */
export const UNCAPPED: Readonly<Record<string, string>> = {
  ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
  ALPHA_VANTAGE_CALLS_PER_DAY: '0',
  ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
  MASSIVE_CALLS_PER_MINUTE: '0',
  YAHOO_CALLS_PER_MINUTE: '0',
  RATE_LIMIT_PER_MINUTE: '0',
};

/**
 * A key on a premium plan: every function is asked of provider A. On the default free plan a premium function
 * (MACD among the indicators) is refused before any call, and computed from Yahoo's bars where it can be.
 */
export const PREMIUM_PLAN: Readonly<Record<string, string>> = { ALPHA_VANTAGE_PLAN: 'premium' };

/** For a test of provider A's own answers: no Yahoo fallback to answer in its place. */
export const NO_FALLBACK: Readonly<Record<string, string>> = { QUOTE_FALLBACK: 'none' };
