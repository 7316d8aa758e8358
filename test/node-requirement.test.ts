// `npm start` on a Node.js older than the service needs: one line naming the needed and the found version,
// and a non-zero exit, rather than "No such built-in module: node:sqlite" from deep in the start.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MINIMUM_NODE, nodeSatisfies, nodeVersionProblem } from '../scripts/node-requirement.mjs';
import { tempDir } from './helpers/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('the version comparison: major, minor and patch in order, a leading v and a pre-release tag allowed', () => {
  assert.equal(nodeSatisfies('v22.13.0', '22.13.0'), true);
  assert.equal(nodeSatisfies('v22.13.1', '22.13.0'), true);
  assert.equal(nodeSatisfies('v22.14.0', '22.13.0'), true);
  assert.equal(nodeSatisfies('v24.0.0', '22.13.0'), true);
  assert.equal(nodeSatisfies('v24.21.0', '22.13.0'), true);
  assert.equal(nodeSatisfies('v22.12.9', '22.13.0'), false);
  assert.equal(nodeSatisfies('v22.9.0', '22.13.0'), false, 'numeric, not string, order (9 < 13)');
  assert.equal(nodeSatisfies('v20.20.2', '22.13.0'), false);
  assert.equal(nodeSatisfies('v100.0.0', '22.13.0'), true);
  assert.equal(nodeSatisfies('22.13.0-nightly20250101', '22.13.0'), true);
  assert.equal(nodeSatisfies('v18.0.0', '22.13'), false);
  assert.equal(nodeSatisfies('v22.13.0', '22.13'), true);
});

test('the message names the needed and the found version, on one line; none for a recent enough Node', () => {
  assert.equal(
    nodeVersionProblem('v20.20.2'),
    'failed to start: this service needs Node.js 22.13 or later (it uses the built-in node:sqlite); found Node.js v20.20.2',
  );
  assert.equal(nodeVersionProblem('v22.13.0'), undefined);
  assert.equal(nodeVersionProblem(process.version), undefined, 'the Node running the tests is recent enough');
});

test('the minimum is the one package.json "engines" declares', () => {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(`>=${MINIMUM_NODE.replace(/\.0$/, '')}`, engines.node);
});

/** A `node` on PATH (or /usr/bin) older than the minimum, e.g. a distribution's packaged Node, if any. */
function oldNode(): { path: string; version: string } | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of new Set(dirs.filter((d) => d !== ''))) {
    const path = join(dir, 'node');
    try {
      accessSync(path, constants.X_OK);
      const version = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
      if (!nodeSatisfies(version, MINIMUM_NODE)) return { path, version };
    } catch {
      // not there, or not a node that runs
    }
  }
  return undefined;
}

test('scripts/start.mjs on an old Node prints the one line and exits 1', (t) => {
  const old = oldNode();
  if (old === undefined) {
    t.skip(`no Node.js older than ${MINIMUM_NODE} on this machine (PATH, /usr/bin, /usr/local/bin)`);
    return;
  }
  const result = spawnSync(old.path, [join(ROOT, 'scripts', 'start.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    // Were the check missing, the service must not come up on a fixed port: fail fast on a free one.
    env: { ...process.env, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent', STATE_DIR: tempDir(t) },
  });
  assert.equal(result.status, 1, `${old.path} (${old.version}): ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr, `${nodeVersionProblem(old.version)}\n`);
  assert.match(result.stderr, new RegExp(`needs Node\\.js 22\\.13 or later .*found Node\\.js ${old.version.replace(/\./g, '\\.')}\\n$`));
});
