// The container image, built from the Dockerfile as it is and run as it would run: `podman build`, then the
// image's own filesystem, user, Env, WorkingDir and Cmd. Containers cannot be started on these machines
// (podman's runtime needs setrlimit, which is refused), so the image is run the way a runtime would: its
// filesystem mounted (`podman create` + `podman mount`), /proc and /dev bound into it, a fresh directory as
// the STATE_DIR volume, the Cmd run there by chroot as the image's user, in a network namespace of its own
// (only loopback: the image's HOST=0.0.0.0 and ports 3000 and 9464 are used as they are, and nothing on the
// host can clash with them). Checks: /api/system/ready answers 200, /api/provider-a/quote?symbol=IBM
// answers 200 with a Global Quote (sandbox mode: no keys), the image's HEALTHCHECK passes, and SIGTERM
// gives exit code 0 after the shutdown line. Prints each step's time and the total.
//
// Needs root (mount, chroot, namespaces), podman, and the base image: where podman or the base is missing
// and ../shared/tools/container-base.sh exists (this workplace's machines), it is run first; elsewhere
// `podman build` pulls node:24-bookworm-slim.
// Usage: node scripts/container-image.mjs [--tag market-data-proxy]
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const BASE = 'docker.io/library/node:24-bookworm-slim';
const CONTAINER_BASE_SH = join(repo, '..', 'shared', 'tools', 'container-base.sh');
const tagAt = process.argv.indexOf('--tag');
const TAG = tagAt > 0 ? process.argv[tagAt + 1] : 'market-data-proxy';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

class StepError extends Error {}

const began = performance.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const timings = {};
let current = '';

async function step(name, what, run) {
  current = what;
  process.stdout.write(`\n== ${what}\n`);
  const started = performance.now();
  const result = await run();
  timings[name] = Math.round(performance.now() - started);
  process.stdout.write(`   done in ${seconds(timings[name])}\n`);
  return result;
}

function fail(message) {
  throw new StepError(message);
}

/** Runs a command to its end; its output is returned, and shown only when it fails. */
function run(command, args, { input, quiet = true } = {}) {
  const result = spawnSync(command, args, {
    cwd: repo,
    encoding: 'utf8',
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', quiet ? 'pipe' : 'inherit', quiet ? 'pipe' : 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) fail(`${command} could not be run: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    fail(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}${output ? `:\n${output}` : ''}`);
  }
  return (result.stdout ?? '').trim();
}

function have(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

// What is left to undo, last first, whatever ends the script.
const cleanups = [];
function cleanUp() {
  while (cleanups.length > 0) {
    try {
      cleanups.pop()();
    } catch (error) {
      process.stderr.write(`cleanup: ${error.message}\n`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    cleanUp();
    process.exit(1);
  });
}

/** The image's user as a runtime resolves it: a name or uid[:gid], looked up in the image's /etc/passwd. */
function imageUser(root, user) {
  const [name, group] = (user || 'root').split(':');
  const entry = readFileSync(join(root, 'etc', 'passwd'), 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === name || fields[2] === name);
  if (entry === undefined) fail(`the image's user "${user}" is not in its /etc/passwd`);
  return { name: entry[0], uid: Number(entry[2]), gid: group === undefined ? Number(entry[3]) : Number(group), home: entry[5] };
}

/** Runs `args` in the server's network namespace, with this script's node when `image` is false, else as `docker exec` would. */
function inContainer(pid, args, { image = false, user, env, timeoutMs = 30_000 } = {}) {
  const enter = image
    ? ['-t', String(pid), '-n', '-m', '-r', '-w', '-S', String(user.uid), '-G', String(user.gid)]
    : ['-t', String(pid), '-n'];
  return spawnSync('nsenter', [...enter, '--', ...args], { encoding: 'utf8', timeout: timeoutMs, env: image ? env : process.env });
}

async function main() {
  if (process.getuid?.() !== 0) fail('this check needs root (it mounts the image and runs it with chroot in namespaces of its own)');
  for (const tool of ['unshare', 'nsenter', 'chroot', 'mount', 'ip'])
    if (!have(tool)) fail(`${tool} is not installed (apt-get install util-linux coreutils mount iproute2)`);

  await step('base', `base image ${BASE}`, () => {
    if (have('podman') && spawnSync('podman', ['image', 'exists', BASE]).status === 0) return void process.stdout.write('   present\n');
    if (existsSync(CONTAINER_BASE_SH)) {
      process.stdout.write(`   building it: bash ${CONTAINER_BASE_SH}\n`);
      return void run('bash', [CONTAINER_BASE_SH], { quiet: false });
    }
    if (!have('podman')) fail('podman is not installed (apt-get install podman)');
    process.stdout.write('   not present: podman build pulls it\n');
  });

  await step('build', `podman build --isolation=chroot --format docker -t ${TAG} . (the Dockerfile as it is)`, () => {
    // Docker's format keeps the HEALTHCHECK (OCI's has no such field), so it can be run below.
    const id = run('podman', ['build', '--isolation=chroot', '--format', 'docker', '--quiet', '-t', TAG, '.']);
    const size = Number(run('podman', ['image', 'inspect', TAG, '--format', '{{.Size}}']));
    process.stdout.write(`   image ${id.split('\n').at(-1).slice(0, 12)}, ${Math.round(size / 1e6)} MB\n`);
  });

  const config = await step('inspect', "the image's configuration (podman image inspect)", () => {
    const [image] = JSON.parse(run('podman', ['image', 'inspect', TAG]));
    const { Env = [], WorkingDir, Cmd, Entrypoint, User, Healthcheck } = image.Config ?? {};
    const command = [...(Entrypoint ?? []), ...(Cmd ?? [])];
    if (command.length === 0) fail('the image has no Cmd');
    const env = Object.fromEntries(Env.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
    // Where podman puts it: beside Config (Docker's own inspect has it in Config).
    const healthcheck = Healthcheck ?? image.Healthcheck;
    // Names only: an image's Env could hold a secret.
    process.stdout.write(
      `   user ${User || 'root'}, workdir ${WorkingDir || '/'}, cmd ${JSON.stringify(command)}\n   env ${Object.keys(env).join(' ')}\n`,
    );
    process.stdout.write(`   healthcheck ${healthcheck?.Test ? `${JSON.stringify(healthcheck.Test.slice(0, 2))}…` : 'none'}\n`);
    return { env, workdir: WorkingDir || '/', command, user: User, healthcheck: healthcheck?.Test };
  });

  const root = await step('mount', "podman create + podman mount (the image's filesystem)", () => {
    const name = `mdp-image-check-${process.pid}`;
    const id = run('podman', ['create', '--name', name, TAG]);
    cleanups.push(() => run('podman', ['rm', '--force', id]));
    const path = run('podman', ['mount', id]);
    cleanups.push(() => run('podman', ['umount', id]));
    process.stdout.write(`   container ${name}, filesystem at ${path}\n`);
    return path;
  });

  const user = imageUser(root, config.user);
  if (user.uid === 0) fail(`the image runs as root (User "${config.user ?? ''}"): it must run as a non-root user`);
  const stateDir = config.env.STATE_DIR;
  if (!stateDir?.startsWith('/')) fail(`the image's Env has no absolute STATE_DIR (got ${JSON.stringify(stateDir)})`);
  if (!existsSync(join(root, stateDir))) fail(`STATE_DIR ${stateDir} does not exist in the image`);
  const volume = mkdtempSync(join(tmpdir(), 'mdp-image-state-'));
  chownSync(volume, user.uid, user.gid);
  cleanups.push(() => rmSync(volume, { recursive: true, force: true }));
  // A runtime sets HOME from the user's entry when the image does not.
  const env = { HOME: user.home, ...config.env };
  const port = Number(config.env.PORT ?? 3000);

  const server = await step(
    'start',
    `start: ${config.command.join(' ')} as ${user.name} (uid ${user.uid}) in ${config.workdir}, STATE_DIR a fresh volume, own network namespace`,
    async () => {
      // Mounts made in a mount namespace of the server's own: they go when it exits, whatever happens here.
      const setup = [
        'set -e',
        'root="$1"; volume="$2"; state="$3"; workdir="$4"; shift 4',
        'mount --rbind /proc "$root/proc"',
        'mount --rbind /dev "$root/dev"',
        'mount --bind "$volume" "$root$state"',
        'ip link set lo up',
        `exec chroot --userspec=${user.uid}:${user.gid} --groups=${user.gid} "$root" /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"`,
      ].join('\n');
      const started = performance.now();
      const child = spawn(
        'unshare',
        ['--net', '--mount', '--', '/bin/sh', '-c', setup, 'setup', root, volume, stateDir, config.workdir, ...config.command],
        {
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      cleanups.push(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      const logs = [];
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
      let startedLine;
      const startLine = new Promise((resolve) => (startedLine = resolve));
      createInterface({ input: child.stdout }).on('line', (line) => {
        let entry;
        try {
          entry = JSON.parse(line);
        } catch {
          entry = { msg: line };
        }
        logs.push(entry);
        if (typeof entry.msg === 'string' && entry.msg.startsWith('market data proxy started')) startedLine(entry);
      });
      let timer;
      const line = await Promise.race([
        startLine,
        exited.then(({ code, signal }) => fail(`the server exited with ${code ?? signal} before it started:\n${stderr.trim()}`)),
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new StepError(`no start line within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS)),
        ),
      ]).finally(() => clearTimeout(timer));
      const startedMs = Math.round(performance.now() - started);
      process.stdout.write(`   pid ${child.pid}: "${line.msg}" at ${line.url} after ${startedMs} ms (metrics ${line.metrics})\n`);
      return { child, exited, logs, stderr: () => stderr, started };
    },
  );

  await step('answers', `GET /api/system/ready and /api/provider-a/quote?symbol=IBM on 127.0.0.1:${port}, and the HEALTHCHECK`, () => {
    // This script's node in the server's network namespace: a client on the host of a published port.
    const probe = `
      const base = 'http://127.0.0.1:${port}';
      const until = Date.now() + ${START_TIMEOUT_MS};
      let ready;
      for (;;) {
        ready = await fetch(base + '/api/system/ready').catch((e) => ({ status: 0, error: String(e.cause?.code ?? e.message) }));
        await ready.body?.cancel();
        if (ready.status === 200 || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const quote = await fetch(base + '/api/provider-a/quote?symbol=IBM');
      console.log(JSON.stringify({ ready: ready.status, readyError: ready.error, quote: quote.status, source: quote.headers.get('x-data-source'), body: await quote.text() }));
    `;
    const result = inContainer(server.child.pid, [process.execPath, '--input-type=module', '-e', probe], {
      timeoutMs: START_TIMEOUT_MS + 10_000,
    });
    if (result.status !== 0) fail(`the probe failed (${result.status ?? result.signal}): ${result.stderr.trim()}`);
    const answer = JSON.parse(result.stdout.trim().split('\n').at(-1));
    const firstAnswerMs = Math.round(performance.now() - server.started);
    if (answer.ready !== 200) fail(`/api/system/ready answered ${answer.ready}${answer.readyError ? ` (${answer.readyError})` : ''}`);
    process.stdout.write(`   /api/system/ready 200 (${firstAnswerMs} ms after the start)\n`);
    let quote;
    try {
      quote = JSON.parse(answer.body)['Global Quote'];
    } catch {
      quote = undefined;
    }
    if (answer.quote !== 200 || quote?.['01. symbol'] !== 'IBM' || !/^\d+\.\d{4}$/.test(quote?.['05. price'] ?? '')) {
      fail(`/api/provider-a/quote?symbol=IBM answered ${answer.quote}: ${answer.body.slice(0, 300)}`);
    }
    process.stdout.write(
      `   /api/provider-a/quote?symbol=IBM 200, Global Quote IBM price ${quote['05. price']} (X-Data-Source ${answer.source})\n`,
    );

    if (config.healthcheck === undefined) return void process.stdout.write('   the image has no HEALTHCHECK\n');
    const [kind, ...test] = config.healthcheck;
    if (kind === 'NONE') return void process.stdout.write('   HEALTHCHECK NONE\n');
    const command = kind === 'CMD-SHELL' ? ['/bin/sh', '-c', test.join(' ')] : test;
    // As the runtime runs it: in the container (its filesystem, user, Env, WorkingDir and network).
    const health = inContainer(server.child.pid, command, { image: true, user, env });
    if (health.status !== 0)
      fail(`the HEALTHCHECK exited with ${health.status ?? health.signal}: ${`${health.stdout}${health.stderr}`.trim().slice(0, 500)}`);
    process.stdout.write(`   HEALTHCHECK exit 0\n`);
  });

  await step('stop', 'SIGTERM: drain, shutdown line, exit code 0', async () => {
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const timeout = new Promise((resolve) => setTimeout(() => resolve(undefined), STOP_TIMEOUT_MS).unref());
    const exit = await Promise.race([server.exited, timeout]);
    if (exit === undefined) fail(`no exit within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM`);
    const stopMs = Math.round(performance.now() - signalled);
    const shutdown = server.logs.some((entry) => entry.msg === 'shutting down' && entry.signal === 'SIGTERM');
    if (!shutdown) fail(`no "shutting down" line with signal SIGTERM in the log (exit ${exit.code ?? exit.signal})`);
    if (exit.code !== 0) fail(`exit ${exit.code ?? exit.signal} after SIGTERM:\n${server.stderr().trim()}`);
    process.stdout.write(`   "shutting down" (SIGTERM) logged, exit 0, ${stopMs} ms after the signal\n`);
    const problems = server.logs.filter((entry) => entry.level >= 50);
    if (problems.length > 0) fail(`error lines in the log: ${problems.map((entry) => entry.msg).join(' | ')}`);
  });
}

let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  process.stderr.write(
    `\ncontainer image check FAILED at "${current}": ${error instanceof StepError ? error.message : (error?.stack ?? error)}\n`,
  );
} finally {
  cleanUp();
}
const total = Math.round(performance.now() - began);
process.stdout.write(`\n${JSON.stringify({ containerImageCheck: failed ? 'failed' : 'passed', totalMs: total, stepsMs: timings })}\n`);
process.stdout.write(`container image check ${failed ? 'failed' : 'passed'} in ${seconds(total)}\n`);
process.exit(failed ? 1 : 0);
