// `npm start`: the service runs in this very process, so the SIGTERM a process manager sends to
// `npm start` reaches the server itself (npm execs a one-command script and forwards the signal) and it
// drains as when signalled directly. dist/ is used when it is newer than every source file (`npm run
// build`, the container image); otherwise the TypeScript sources run through tsx, which answers sooner
// than building first (measured: about 3.5 s against 10-15 s on a loaded 2-core machine) and
// needs no compiler, so it also serves a production install of a source checkout (`npm ci --omit=dev`).
// Without tsx (`--omit=optional`) a stale dist/ is rebuilt when the compiler is there.
// First, on a Node.js too old for the service, one line saying which it needs (node-requirement.mjs); so
// that old versions get that far, this file has no top-level await.
import { exitIfNodeTooOld } from './node-requirement.mjs';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

exitIfNodeTooOld();

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'dist', 'server.js');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

function compiler() {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  } catch {
    return undefined;
  }
}

function fresh() {
  if (!existsSync(built)) return false;
  const sources = [join(root, 'src'), join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json')];
  return statSync(built).mtimeMs >= Math.max(...sources.map(newestChange));
}

async function tsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

function build(tsc) {
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status === 0) return built;
  process.stderr.write('failed to start: the build (tsc -p tsconfig.build.json) failed\n');
  process.exit(1);
}

async function entry() {
  if (fresh()) return built;
  const loader = await tsx();
  if (loader !== undefined) {
    loader.register();
    return join(root, 'src', 'server.ts');
  }
  const tsc = compiler();
  if (tsc !== undefined) return build(tsc);
  process.stderr.write(
    'failed to start: dist/ is missing or older than src/, and neither tsx nor tsc is installed: run npm install, or npm run build where they are\n',
  );
  process.exit(1);
}

void entry().then((path) => import(pathToFileURL(path).href));
