// The container image, built from the Dockerfile as it is and run as it would run: `podman build`, then the
// image's own filesystem, user, Env, WorkingDir and Cmd. Containers cannot be started on these machines
// (podman's runtime needs setrlimit, which is refused), so the image is run the way a runtime would: its
// filesystem mounted (`podman create` + `podman mount`), /proc and /dev bound into it, a fresh directory as
// the STATE_DIR volume, the Cmd run there by chroot as the image's user, in a network namespace of its own
// (only loopback: the image's HOST=0.0.0.0 and ports 3000 and 9464 are used as they are, and nothing on the
// host can clash with them). Checks: /api/system/ready answers 200, /api/provider-a/quote?symbol=IBM
// answers 200 with a Global Quote (sandbox mode: no keys), the image's HEALTHCHECK passes, and SIGTERM
// gives exit code 0 after the shutdown line. Then the same image as the Kubernetes manifest runs it
// (deploy/kubernetes/overlays/single, rendered by `kubectl kustomize`): its user, its ConfigMap's settings on
// the image's Env, the root read-only but its emptyDir volumes (STATE_DIR, /tmp): the probes' paths answer, a
// quote too, a write lands in the volumes and is refused elsewhere, and after its preStop a SIGTERM ends it
// within terminationGracePeriodSeconds. Prints each step's time and the total.
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
import { parseAllDocuments } from 'yaml';

const repo = fileURLToPath(new URL('..', import.meta.url));
const BASE = 'docker.io/library/node:24-bookworm-slim';
const CONTAINER_BASE_SH = join(repo, '..', 'shared', 'tools', 'container-base.sh');
const tagAt = process.argv.indexOf('--tag');
const TAG = tagAt > 0 ? process.argv[tagAt + 1] : 'market-data-proxy';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** The Kubernetes manifest whose container is run as well: deploy/kubernetes, one replica on the embedded store. */
const KUBERNETES_OVERLAY = 'deploy/kubernetes/overlays/single';

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
  // A runtime sets HOME from the user's entry when the image does not.
  const env = { HOME: user.home, ...config.env };
  const port = Number(config.env.PORT ?? 3000);

  const server = await step(
    'start',
    `start: ${config.command.join(' ')} as ${user.name} (uid ${user.uid}) in ${config.workdir}, STATE_DIR a fresh volume, own network namespace`,
    () => startServer({ root, config, user, env, mounts: [[freshDir('state', user), stateDir]] }),
  );

  await step('answers', `GET /api/system/ready and /api/provider-a/quote?symbol=IBM on 127.0.0.1:${port}, and the HEALTHCHECK`, () => {
    askService(server, port, { ready: '/api/system/ready' });
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

  await step('stop', 'SIGTERM: drain, shutdown line, exit code 0', () => stopServer(server, STOP_TIMEOUT_MS));

  // The same image as deploy/kubernetes runs it: the manifest's user, settings and volumes, the root read-only.
  const pod = await step('manifest', `kubectl kustomize ${KUBERNETES_OVERLAY}: the Deployment's container`, () =>
    manifestContainer(root, config, user),
  );

  const k8s = await step(
    'k8s-start',
    `start as the manifest says: uid ${pod.user.uid}, read-only root but ${pod.mounts.map(([, path]) => path).join(' and ')} (emptyDir)`,
    () => startServer({ root, config, user: pod.user, env: pod.env, mounts: pod.mounts, readOnlyRoot: true }),
  );

  await step('k8s-answers', `the manifest's probes (${pod.live}, ${pod.ready}), a quote, and writes only to the emptyDir volumes`, () => {
    askService(k8s, pod.port, { ready: pod.ready, live: pod.live });
    const write = (dir) =>
      inContainer(k8s.child.pid, ['/bin/sh', '-c', `echo probe > "${dir}/.write-check" && rm "${dir}/.write-check"`], {
        image: true,
        user: pod.user,
        env: pod.env,
      });
    for (const [, path] of pod.mounts) {
      const result = write(path);
      if (result.status !== 0) fail(`${path} is not writable: ${result.stderr.trim()}`);
    }
    const refused = write(config.workdir);
    if (refused.status === 0 || !/read-only/i.test(refused.stderr))
      fail(`the root is not read-only: ${config.workdir} took a write (${refused.stderr.trim()})`);
    process.stdout.write(
      `   ${pod.mounts.map(([, path]) => path).join(' and ')} writable; ${config.workdir}: "${refused.stderr.trim()}"\n`,
    );
  });

  await step(
    'k8s-stop',
    `preStop (${pod.preStop.join(' ')}), then SIGTERM: exit 0 within terminationGracePeriodSeconds (${pod.graceSeconds} s)`,
    () => {
      const began = performance.now();
      const preStop = inContainer(k8s.child.pid, pod.preStop, {
        image: true,
        user: pod.user,
        env: pod.env,
        timeoutMs: pod.graceSeconds * 1000,
      });
      if (preStop.status !== 0)
        fail(`preStop exited with ${preStop.status ?? preStop.signal}: ${`${preStop.stdout}${preStop.stderr}`.trim()}`);
      const preStopMs = Math.round(performance.now() - began);
      process.stdout.write(`   preStop exit 0 after ${preStopMs} ms\n`);
      return stopServer(k8s, pod.graceSeconds * 1000 - preStopMs);
    },
  );
}

/** A fresh directory owned by the container's user: a volume (STATE_DIR, an emptyDir). */
function freshDir(name, user) {
  const dir = mkdtempSync(join(tmpdir(), `mdp-image-${name}-`));
  chownSync(dir, user.uid, user.gid);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The image's Cmd run as a runtime runs it: mount and network namespaces of its own (only loopback), the image's
 * filesystem with /proc and /dev bound in and each of `mounts` ([host directory, path]) bound at its path, the root
 * read-only when asked, as `user` with `env`. Resolves once the start line is logged. Mounts go when it exits.
 */
async function startServer({ root, config, user, env, mounts, readOnlyRoot = false }) {
  const setup = [
    'set -e',
    'root="$1"; workdir="$2"; shift 2',
    ...(readOnlyRoot ? ['mount --bind "$root" "$root"', 'mount -o remount,bind,ro "$root"'] : []),
    'mount --rbind /proc "$root/proc"',
    'mount --rbind /dev "$root/dev"',
    'while [ "$1" != -- ]; do mount --bind "$1" "$root$2"; shift 2; done; shift',
    'ip link set lo up',
    `exec chroot --userspec=${user.uid}:${user.gid} --groups=${user.gid} "$root" /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"`,
  ].join('\n');
  const started = performance.now();
  const child = spawn(
    'unshare',
    ['--net', '--mount', '--', '/bin/sh', '-c', setup, 'setup', root, config.workdir, ...mounts.flat(), '--', ...config.command],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
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
}

/** Waits for `ready` to answer 200 (and `live`, when given), then asks for a sandbox quote; fails otherwise. */
function askService(server, port, { ready, live }) {
  // This script's node in the server's network namespace: a client on the host of a published port.
  const probe = `
    const base = 'http://127.0.0.1:${port}';
    const until = Date.now() + ${START_TIMEOUT_MS};
    let ready;
    for (;;) {
      ready = await fetch(base + ${JSON.stringify(ready)}).catch((e) => ({ status: 0, error: String(e.cause?.code ?? e.message) }));
      await ready.body?.cancel();
      if (ready.status === 200 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const live = ${live === undefined ? 'undefined' : `(await fetch(base + ${JSON.stringify(live)})).status`};
    const quote = await fetch(base + '/api/provider-a/quote?symbol=IBM');
    console.log(JSON.stringify({ ready: ready.status, readyError: ready.error, live, quote: quote.status, source: quote.headers.get('x-data-source'), body: await quote.text() }));
  `;
  const result = inContainer(server.child.pid, [process.execPath, '--input-type=module', '-e', probe], {
    timeoutMs: START_TIMEOUT_MS + 10_000,
  });
  if (result.status !== 0) fail(`the probe failed (${result.status ?? result.signal}): ${result.stderr.trim()}`);
  const answer = JSON.parse(result.stdout.trim().split('\n').at(-1));
  const firstAnswerMs = Math.round(performance.now() - server.started);
  if (answer.ready !== 200) fail(`${ready} answered ${answer.ready}${answer.readyError ? ` (${answer.readyError})` : ''}`);
  process.stdout.write(`   ${ready} 200 (${firstAnswerMs} ms after the start)\n`);
  if (live !== undefined) {
    if (answer.live !== 200) fail(`${live} answered ${answer.live}`);
    process.stdout.write(`   ${live} 200\n`);
  }
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
}

/** SIGTERM; the exit must come within `withinMs`, with code 0 after the shutdown line, and no error line logged. */
async function stopServer(server, withinMs) {
  const signalled = performance.now();
  server.child.kill('SIGTERM');
  const timeout = new Promise((resolve) => setTimeout(() => resolve(undefined), withinMs).unref());
  const exit = await Promise.race([server.exited, timeout]);
  if (exit === undefined) fail(`no exit within ${Math.round(withinMs / 1000)} s of SIGTERM`);
  const stopMs = Math.round(performance.now() - signalled);
  const shutdown = server.logs.some((entry) => entry.msg === 'shutting down' && entry.signal === 'SIGTERM');
  if (!shutdown) fail(`no "shutting down" line with signal SIGTERM in the log (exit ${exit.code ?? exit.signal})`);
  if (exit.code !== 0) fail(`exit ${exit.code ?? exit.signal} after SIGTERM:\n${server.stderr().trim()}`);
  process.stdout.write(`   "shutting down" (SIGTERM) logged, exit 0, ${stopMs} ms after the signal\n`);
  const problems = server.logs.filter((entry) => entry.level >= 50);
  if (problems.length > 0) fail(`error lines in the log: ${problems.map((entry) => entry.msg).join(' | ')}`);
}

/**
 * The container of the single overlay's Deployment, as the kubelet would run it on this image: the image's Env
 * under the ConfigMaps' settings and the manifest's own (a Secret's keys would come last: none here, the sandbox),
 * its user, the emptyDir volumes (fresh directories), the probes' paths, preStop and the grace period.
 */
function manifestContainer(root, config, imageUserEntry) {
  if (!have('kubectl')) fail('kubectl is not installed (apt-get install kubernetes-client)');
  const objects = parseAllDocuments(run('kubectl', ['kustomize', KUBERNETES_OVERLAY])).map((document) => document.toJS());
  const deployment = objects.find((o) => o.kind === 'Deployment');
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  const maps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o.data ?? {}]));
  const fromMaps = (container.envFrom ?? []).filter((e) => e.configMapRef).map((e) => maps.get(e.configMapRef.name) ?? {});
  const literal = Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const uid = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
  const gid = container.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup ?? uid;
  if (uid === undefined || uid === 0) fail(`the manifest runs the container as ${uid ?? "the image's user"}: it must name a non-root uid`);
  if (container.securityContext?.readOnlyRootFilesystem !== true) fail('the manifest does not make the root filesystem read-only');
  const user = { ...imageUserEntry, uid, gid };
  const emptyDirs = new Set(pod.volumes.filter((v) => v.emptyDir !== undefined).map((v) => v.name));
  const mounts = container.volumeMounts
    .filter((m) => emptyDirs.has(m.name))
    .map((m) => {
      if (!existsSync(join(root, m.mountPath))) fail(`${m.mountPath} (volume ${m.name}) does not exist in the image`);
      return [freshDir(m.name, user), m.mountPath];
    });
  const named = Object.fromEntries(container.ports.map((p) => [p.name, p.containerPort]));
  const portOf = (probe) => (typeof probe.httpGet.port === 'number' ? probe.httpGet.port : named[probe.httpGet.port]);
  const env = { HOME: user.home, ...config.env, ...Object.assign({}, ...fromMaps), ...literal };
  const settings = [...Object.keys(Object.assign({}, ...fromMaps)), ...Object.keys(literal)];
  process.stdout.write(`   ${deployment.metadata.name}: uid ${uid}:${gid}, settings ${settings.join(' ')}\n`);
  return {
    env,
    user,
    mounts,
    port: portOf(container.readinessProbe),
    ready: container.readinessProbe.httpGet.path,
    live: container.livenessProbe.httpGet.path,
    preStop: container.lifecycle.preStop.exec.command,
    graceSeconds: pod.terminationGracePeriodSeconds,
  };
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
