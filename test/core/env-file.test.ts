import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadEnvFile } from '../../src/core/env-file.js';
import { tempDir } from '../helpers/config.js';

test('.env fills what the environment does not set; the environment wins', (t) => {
  const dir = tempDir(t);
  writeFileSync(
    join(dir, '.env'),
    '# a comment\nPORT=4000\nLOG_LEVEL=debug  # trailing comment\nCORS_ORIGINS="https://a.example, https://b.example"\n',
  );
  const env: NodeJS.ProcessEnv = { PORT: '5000' };
  assert.equal(loadEnvFile(dir, env), join(dir, '.env'));
  assert.deepEqual(env, { PORT: '5000', LOG_LEVEL: 'debug', CORS_ORIGINS: 'https://a.example, https://b.example' });
});

test('no .env is not an error; an unreadable one is, naming the file', (t) => {
  const env: NodeJS.ProcessEnv = {};
  assert.equal(loadEnvFile(tempDir(t), env), undefined);
  assert.deepEqual(env, {});
  const dir = tempDir(t);
  mkdirSync(join(dir, '.env'));
  assert.throws(() => loadEnvFile(dir, env), /cannot read .*\.env/);
});
