// compose.yaml's nginx (deploy/nginx.conf) run here in front of a service on loopback: the same server block,
// with the upstream pointed at that service instead of Docker's DNS and the cache in a temporary folder, so
// tests and benchmarks exercise the configuration that ships. Needs Debian's nginx (.ci/run installs nginx-light).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const NGINX = '/usr/sbin/nginx';

export interface RunningNginx {
  url: string;
  /** Every cache key nginx has stored (the `KEY:` line of each cache file). */
  storedKeys(): string[];
  stop(): Promise<void>;
}

export function nginxInstalled(): boolean {
  return spawnSync(NGINX, ['-v']).status === 0;
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** deploy/nginx.conf with its upstream at `upstream` (host:port) and its cache under `dir`. */
function localNginxConf(upstream: string, port: number, dir: string): string {
  const shipped = readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'nginx.conf'), 'utf8');
  const server = shipped
    .replace(/^resolver .*$/m, '')
    .replace(/server api:3000 resolve /, `server ${upstream} `)
    .replace('/var/cache/nginx/mdp', join(dir, 'cache'))
    .replace('listen 80;', `listen 127.0.0.1:${port};`);
  if (server === shipped || !server.includes(upstream) || !server.includes(join(dir, 'cache'))) {
    throw new Error('deploy/nginx.conf no longer has the lines this helper points elsewhere');
  }
  return `worker_processes 1;
error_log ${join(dir, 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
${server}
}
`;
}

/** Starts nginx in the foreground; resolves once it answers. */
export async function startNginx(upstreamUrl: string): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'mdp-nginx-'));
  // Its workers run as an unprivileged user when started as root.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, localNginxConf(new URL(upstreamUrl).host, port, dir));
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/api/system/live`);
      break;
    } catch {
      if (attempt > 100) throw new Error(`nginx did not answer: ${stderr}`);
      await sleep(50);
    }
  }
  return {
    url,
    storedKeys: () => cacheFiles(join(dir, 'cache')).map((file) => /\nKEY: (.*)\n/.exec(readFileSync(file, 'latin1'))?.[1] ?? '?'),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGQUIT');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function cacheFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? cacheFiles(path) : [path];
  });
}
