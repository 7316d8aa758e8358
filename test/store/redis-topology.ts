// Real Redis topologies started from `redis-server` for tests and benchmarks: a Cluster of three primaries,
// and a primary with a replica behind three Sentinels. Random free ports, a temporary directory, every
// process killed at the end. Readiness is each process's own answer (a ping, CLUSTER INFO, a Sentinel's
// view of its primary), asked again until it holds or a deadline passes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { issueCertificate } from '../helpers/test-ca.js';

const run = promisify(execFile);

export interface RedisNode {
  port: number;
  process: ChildProcess;
  args: string[];
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Asks `check` again every 50 ms until it answers true; throws after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

/** The node answers (a password-protected one answers NOAUTH). */
async function answers(port: number): Promise<boolean> {
  return /PONG|NOAUTH/.test(await cli(port, 'ping'));
}

class Topology {
  readonly dir = mkdtempSync(join(tmpdir(), 'mdp-redis-'));
  readonly nodes: RedisNode[] = [];

  async start(args: string[], binary = 'redis-server'): Promise<RedisNode> {
    const port = await freePort();
    const full = [...args, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir];
    const node: RedisNode = { port, args: full, process: spawn(binary, full, { stdio: 'ignore' }) };
    this.nodes.push(node);
    await until(`redis on ${port}`, () => answers(port));
    return node;
  }

  /** The same node started again on its port, empty (no persistence): a new run id. */
  async restart(node: RedisNode): Promise<void> {
    await this.kill(node);
    node.process = spawn('redis-server', node.args, { stdio: 'ignore' });
    await until(`redis on ${node.port}`, () => answers(node.port));
  }

  /** Kills a node at once (SIGKILL): what a lost machine looks like to its clients. */
  async kill(node: RedisNode): Promise<void> {
    if (node.process.exitCode !== null || node.process.signalCode !== null) return;
    const exited = once(node.process, 'exit');
    node.process.kill('SIGKILL');
    await exited;
  }

  /** Freezes a node (SIGSTOP): it keeps every socket open and answers nothing, as a hung machine does. */
  pause(node: RedisNode): void {
    node.process.kill('SIGSTOP');
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One node of its own, which a test may kill and restart. */
export class RedisStandalone extends Topology {
  node!: RedisNode;
  /** With TLS: the port that speaks it and the CA that signed the node's certificate (a PEM file). */
  tls: { port: number; caFile: string } | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.node.port}`;
  }

  static async start(args: string[] = []): Promise<RedisStandalone> {
    const standalone = new RedisStandalone();
    standalone.node = await standalone.start(args);
    return standalone;
  }

  /**
   * A node that also speaks TLS, as managed services do: a CA and a certificate for localhost made with
   * openssl in the node's directory, clients not asked for certificates of their own.
   */
  static async startTls(args: string[] = []): Promise<RedisStandalone> {
    const standalone = new RedisStandalone();
    const { caFile, keyFile, certFile } = await issueCertificate(standalone.dir, 'mdp test CA', ['DNS:localhost', 'IP:127.0.0.1']);
    const port = await freePort();
    standalone.tls = { port, caFile };
    const tls = ['--tls-port', String(port), '--tls-cert-file', certFile, '--tls-key-file', keyFile];
    standalone.node = await standalone.start([...args, ...tls, '--tls-ca-cert-file', caFile, '--tls-auth-clients', 'no']);
    return standalone;
  }
}

export class RedisCluster extends Topology {
  get seeds(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** `primaries` primaries, each with `replicasEach` replicas that the Cluster promotes when it fails (node timeout 1 s). */
  static async start(primaries = 3, replicasEach = 0): Promise<RedisCluster> {
    const cluster = new RedisCluster();
    try {
      for (let i = 0; i < primaries * (1 + replicasEach); i += 1) {
        await cluster.start(['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}.conf`, '--cluster-node-timeout', '1000']);
      }
      const addresses = cluster.nodes.map((n) => `127.0.0.1:${n.port}`);
      await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasEach), '--cluster-yes']);
      for (const node of cluster.nodes)
        await until('cluster state ok', async () => (await cli(node.port, 'cluster', 'info')).includes('cluster_state:ok'));
      for (const node of cluster.nodes)
        await until('every replica linked to its primary', async () => {
          const replication = await cli(node.port, 'info', 'replication');
          return replication.includes('role:master') || replication.includes('master_link_status:up');
        });
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The primaries serving slots now, as the first node that answers sees them (host:port, sorted). */
  async primaries(): Promise<string[]> {
    for (const node of this.nodes) {
      try {
        const out = await cli(node.port, 'cluster', 'nodes');
        return out
          .trim()
          .split('\n')
          .map((line) => line.split(' '))
          .filter((fields) => (fields[2] ?? '').includes('master') && !(fields[2] ?? '').includes('fail') && fields.length > 8)
          .map((fields) => (fields[1] ?? '').split('@')[0] as string)
          .sort();
      } catch {
        // That node is down: ask the next.
      }
    }
    throw new Error('no cluster node answers');
  }

  /** A killed node started again on its own configuration: the Cluster takes it back as a replica of the one promoted in its place. */
  async rejoin(node: RedisNode): Promise<void> {
    await this.restart(node);
    await until(`${node.port} back as a linked replica`, async () =>
      (await cli(node.port, 'info', 'replication')).includes('master_link_status:up'),
    );
    for (const other of this.nodes)
      await until('cluster state ok', async () => (await cli(other.port, 'cluster', 'info')).includes('cluster_state:ok'));
  }

  /** The primary holding a key that matches `pattern` (a SCAN pattern), if any does. */
  async primaryHolding(pattern: string): Promise<RedisNode | undefined> {
    const primaries = await this.primaries();
    for (const node of this.nodes.filter((n) => primaries.includes(`127.0.0.1:${n.port}`))) {
      if ((await cli(node.port, '--scan', '--pattern', pattern)).trim() !== '') return node;
    }
    return undefined;
  }

  /** Which node holds `key`'s slot. */
  async nodeOf(key: string): Promise<RedisNode> {
    const first = this.nodes[0] as RedisNode;
    const slot = Number((await cli(first.port, 'cluster', 'keyslot', key)).trim());
    const client = new Redis(first.port, '127.0.0.1');
    try {
      const slots = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      const owner = slots.find(([from, to]) => slot >= from && slot <= to);
      return this.nodes.find((n) => n.port === owner?.[2][1]) as RedisNode;
    } finally {
      client.disconnect();
    }
  }
}

export class RedisSentinelGroup extends Topology {
  static readonly NAME = 'mdp-primary';
  primary!: RedisNode;
  replica!: RedisNode;
  readonly sentinels: RedisNode[] = [];

  get sentinelAddresses(): string {
    return this.sentinels.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** A primary, one replica and three Sentinels (quorum 2) that fail over within about a second. */
  static async start(options: { password?: string; sentinelPassword?: string } = {}): Promise<RedisSentinelGroup> {
    const group = new RedisSentinelGroup();
    const auth = options.password === undefined ? [] : ['--requirepass', options.password, '--masterauth', options.password];
    try {
      group.primary = await group.start(auth);
      group.replica = await group.start([...auth, '--replicaof', '127.0.0.1', String(group.primary.port)]);
      for (let i = 0; i < 3; i += 1) {
        const conf = join(group.dir, `sentinel-${i}.conf`);
        const lines = [
          `sentinel monitor ${RedisSentinelGroup.NAME} 127.0.0.1 ${group.primary.port} 2`,
          `sentinel down-after-milliseconds ${RedisSentinelGroup.NAME} 1000`,
          `sentinel failover-timeout ${RedisSentinelGroup.NAME} 5000`,
          ...(options.password === undefined ? [] : [`sentinel auth-pass ${RedisSentinelGroup.NAME} ${options.password}`]),
          ...(options.sentinelPassword === undefined ? [] : [`requirepass ${options.sentinelPassword}`]),
        ];
        await import('node:fs/promises').then((fs) => fs.writeFile(conf, `${lines.join('\n')}\n`));
        const port = await freePort();
        const args = [conf, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', group.dir];
        const node: RedisNode = { port, args, process: spawn('redis-server', args, { stdio: 'ignore' }) };
        group.nodes.push(node);
        group.sentinels.push(node);
      }
      const sentinelAuth = options.sentinelPassword === undefined ? [] : ['-a', options.sentinelPassword, '--no-auth-warning'];
      for (const sentinel of group.sentinels)
        await until('sentinels to see each other and the replica', async () => {
          const out = await cli(sentinel.port, ...sentinelAuth, 'sentinel', 'master', RedisSentinelGroup.NAME);
          const fields = out.trim().split('\n');
          const field = (name: string) => fields[fields.indexOf(name) + 1];
          return field('num-other-sentinels') === '2' && field('num-slaves') === '1';
        });
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  /**
   * The primary that was killed, started again, empty, as a replica of the one the Sentinels promoted (how
   * an operator brings a lost machine back); the two swap roles here once every Sentinel sees it replicate.
   */
  async rejoin(node: RedisNode): Promise<void> {
    const promoted = this.nodes.find((n) => n.port === (this.primary === node ? this.replica : this.primary).port) as RedisNode;
    const at = node.args.indexOf('--replicaof');
    const args = at === -1 ? node.args : [...node.args.slice(0, at), ...node.args.slice(at + 3)];
    node.args = [...args, '--replicaof', '127.0.0.1', String(promoted.port)];
    await this.restart(node);
    for (const sentinel of this.sentinels) {
      const client = new Redis(sentinel.port, '127.0.0.1');
      try {
        await until(
          `every Sentinel to see ${node.port} replicate`,
          async () => {
            const replicas = (await client.call('SENTINEL', 'REPLICAS', RedisSentinelGroup.NAME)) as string[][];
            return replicas.some((flat) => {
              const field = (name: string) => flat[flat.indexOf(name) + 1];
              return field('port') === String(node.port) && field('flags') === 'slave' && field('master-link-status') === 'ok';
            });
          },
          30_000,
        );
      } finally {
        client.disconnect();
      }
    }
    this.primary = promoted;
    this.replica = node;
  }

  /** The primary the Sentinels name now. */
  async currentPrimaryPort(): Promise<number> {
    const sentinel = this.sentinels[0] as RedisNode;
    const out = await cli(sentinel.port, 'sentinel', 'get-master-addr-by-name', RedisSentinelGroup.NAME);
    return Number(out.trim().split('\n')[1]);
  }
}
