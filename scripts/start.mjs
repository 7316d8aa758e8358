// `npm start`: the service runs in this very process, so the SIGTERM a process manager sends to
// `npm start` reaches the server itself (npm execs a one-command script and forwards the signal) and it
// drains as when signalled directly. dist/ is used when it is newer than every source file; a stale or
// missing dist/ is rebuilt when the compiler is installed; a production install of a source checkout
// (`npm ci --omit=dev`: no compiler, no dist/) runs the TypeScript sources through tsx instead.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

async function entry() {
  if (fresh()) return built;
  const tsc = compiler();
  if (tsc !== undefined) {
    const build = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
    if (build.status !== 0) {
      process.stderr.write('failed to start: the build (tsc -p tsconfig.build.json) failed\n');
      process.exit(1);
    }
    return built;
  }
  const { register } = await import('tsx/esm/api');
  register();
  return join(root, 'src', 'server.ts');
}

await import(pathToFileURL(await entry()).href);
