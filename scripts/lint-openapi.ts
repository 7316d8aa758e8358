// Part of `npm run lint`: the OpenAPI document the service serves (/api/openapi.json), written to a temporary
// file and held to two independent linters: Redocly's recommended rules (no error, no warning) and Spectral's
// `spectral:oas` ruleset (.spectral.yaml; no error, no warning). Both run at once, offline.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withOfflineApp } from './docs/offline-app.js';

const ROOT = join(import.meta.dirname, '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** Runs a linter, its output held back unless it fails. */
function run(name: string, args: string[]): Promise<{ name: string; ok: boolean; output: string }> {
  return new Promise((resolve) => {
    // No telemetry and no update check: lint runs offline and sends nothing anywhere.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const child = spawn(bin(name), args, { cwd: ROOT, env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', (error) => resolve({ name, ok: false, output: String(error) }));
    child.on('close', (status) => resolve({ name, ok: status === 0, output }));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'mdp-openapi-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(await withOfflineApp(async (app) => app.swagger()), null, 2));
  const results = await Promise.all([
    // --max-problems: every problem printed; warnings fail as errors do (recommended's warnings included).
    run('redocly', ['lint', '--extends=recommended', '--format=stylish', '--max-problems=1000', file]),
    run('spectral', ['lint', '--ruleset', join(ROOT, '.spectral.yaml'), '--fail-severity=warn', '--display-only-failures', file]),
  ]);
  for (const { name, ok, output } of results) {
    const redoclyWarned = name === 'redocly' && /\bwarning\b/i.test(output);
    if (!ok || redoclyWarned) {
      process.stderr.write(`OpenAPI lint (${name}) failed on the document /api/openapi.json serves:\n${output}\n`);
      process.exitCode = 1;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
