// `npm start` on a production install of a clean copy of the repository (`npm ci --omit=dev`: no dist/, no
// compiler, so scripts/start.mjs runs the sources via tsx): started, asked /api/system/ready, sent SIGTERM
// and checked for a clean exit with its shutdown line. The container image itself is built and run by
// scripts/container-image.mjs (both are `npm run test:production`).
// Needs the npm registry (or a warm npm cache). Prints the time to first answer.
// Usage: node scripts/production-layout.mjs [--keep]
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'mdp-production-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function step(what) {
  process.stdout.write(`\n== ${what}\n`);
}

function run(command, args, cwd) {
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });
}

function copyTracked(to) {
  // What a clone of the working tree would hold: tracked and new files, nothing git ignores.
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' });
  const files = listed.split('\0').filter((file) => file !== '' && existsSync(join(repo, file)));
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(repo, file), join(to, file));
  }
}

/** Starts `command`, waits for its first 200 on /api/system/ready, sends SIGTERM, checks the exit. */
async function startAndStop(label, command, args, cwd, env) {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info', STATE_DIR: join(cwd, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const logs = [];
  const url = await new Promise((resolve, reject) => {
    void exited.then(({ code }) => reject(new Error(`${label}: exited with ${code} before listening`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line);
      logs.push(entry);
      if (typeof entry.url === 'string' && typeof entry.mode === 'string') resolve(entry.url);
    });
  });
  const local = new URL(url);
  local.hostname = '127.0.0.1'; // it may listen on 0.0.0.0; only loopback is asked
  for (;;) {
    const res = await fetch(new URL('/api/system/ready', local)).catch(() => undefined);
    await res?.body?.cancel();
    if (res?.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const firstAnswerMs = Math.round(performance.now() - started);
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  const shutdown = logs.some((entry) => entry.msg === 'shutting down' && entry.signal === 'SIGTERM');
  const ok = code === 0 && signal === null && shutdown;
  process.stdout.write(
    `${label}: listening at ${url}, first answer in ${firstAnswerMs} ms, exit ${code ?? signal}, shutdown line ${shutdown ? 'logged' : 'MISSING'}\n`,
  );
  if (!ok) throw new Error(`${label}: no clean exit after SIGTERM`);
  return firstAnswerMs;
}

try {
  const clone = join(work, 'clone');
  step(`clean copy of the tracked files, production install (npm ci --omit=dev) in ${clone}`);
  copyTracked(clone);
  run(npm, ['ci', '--omit=dev'], clone);
  step('npm start in the production install (no dist/, no compiler)');
  const npmStartMs = await startAndStop('npm start', npm, ['start', '--silent'], clone, { HOST: '127.0.0.1' });
  process.stdout.write(`\n${JSON.stringify({ node: process.version, npmStartProductionInstallMs: npmStartMs })}\n`);
} finally {
  if (process.argv.includes('--keep')) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
