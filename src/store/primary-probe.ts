// Asks the deployment itself, on short connections of its own, which primaries it names now: the
// Sentinels (SENTINEL GET-MASTER-ADDR-BY-NAME) or a Cluster node (CLUSTER SLOTS). The primary watch
// compares the answer with what the service's clients use, so that no replica relies on its client
// library alone to follow a failover.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';
import type { RedisAddress, RedisTarget } from '../core/config.js';

export interface NamedPrimaries {
  /** host:port as named, sorted; null for a single node, which names no other. */
  primaries: string[] | null;
  /** Whether sockets to `inUse` (host:port, sorted) reach exactly the named primaries (a name matching any of its addresses). */
  uses(inUse: string[]): boolean;
  /** Whether the named primary answers us (a Cluster node's answer is its own proof). Asked on demand, once. */
  reachable(): Promise<boolean>;
}

/**
 * What the deployment names now, or undefined when no Sentinel or node answered. A Cluster is asked through
 * its seed nodes, then `known` (host:port of the nodes the client last used). Never throws.
 */
export async function namedPrimaries(target: RedisTarget, timeoutMs: number, known: string[] = []): Promise<NamedPrimaries | undefined> {
  if (target.kind === 'redis') {
    return { primaries: null, uses: () => true, reachable: once(() => answers(new Redis(target.url, shortLived(timeoutMs)))) };
  }
  if (target.kind === 'redis-cluster') {
    const nodes = [...target.nodes, ...known.map(parse)];
    const primaries = await firstAnswer(nodes, (node) => clusterPrimaries(node, target, timeoutMs));
    return primaries === undefined
      ? undefined
      : { primaries: names(primaries), uses: await matcher(primaries), reachable: async () => true };
  }
  const named = await firstAnswer(target.sentinels, (sentinel) => sentinelPrimary(sentinel, target, timeoutMs));
  if (named === undefined) return undefined;
  return {
    primaries: names([named]),
    uses: await matcher([named]),
    reachable: once(() => answers(new Redis({ ...named, ...nodeAuth(target), ...shortLived(timeoutMs) }), 'master')),
  };
}

function names(primaries: RedisAddress[]): string[] {
  return primaries.map(({ host, port }) => `${host}:${port}`).sort();
}

/** Compares by the addresses a socket reports: a named host matches any address it resolves to. */
async function matcher(primaries: RedisAddress[]): Promise<(inUse: string[]) => boolean> {
  const addresses = await Promise.all(
    primaries.map(async ({ host, port }) => {
      const all = isIP(host) === 0 ? (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address) : [host];
      return new Set(all.map((address) => `${address}:${port}`));
    }),
  );
  return (inUse) =>
    inUse.length === addresses.length && inUse.every((address) => addresses.some((alternatives) => alternatives.has(address)));
}

async function sentinelPrimary(
  sentinel: RedisAddress,
  target: Extract<RedisTarget, { kind: 'redis-sentinel' }>,
  timeoutMs: number,
): Promise<RedisAddress> {
  const client = new Redis({ ...sentinel, password: target.sentinelPassword, ...shortLived(timeoutMs) });
  return ask(client, async () => {
    const reply = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', target.name)) as [string, string] | null;
    if (reply === null) throw new Error('the Sentinel does not know the name');
    return { host: reply[0], port: Number(reply[1]) };
  });
}

async function clusterPrimaries(node: RedisAddress, target: RedisTarget, timeoutMs: number): Promise<RedisAddress[]> {
  const client = new Redis({ ...node, ...nodeAuth(target), ...shortLived(timeoutMs) });
  return ask(client, async () => {
    const slots = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
    if (slots.length === 0) throw new Error('the node serves no slots');
    // An empty host is the node that answered (its own address unknown to itself).
    const owners = new Set(slots.map(([, , [host, port]]) => `${host === '' ? node.host : host}:${port}`));
    return [...owners].map(parse);
  });
}

function parse(text: string): RedisAddress {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at), port: Number(text.slice(at + 1)) };
}

function nodeAuth(target: RedisTarget): RedisOptions {
  if (target.kind === 'redis') return {};
  return { username: target.username, password: target.password, ...(target.tls ? { tls: {} } : {}) };
}

/** One attempt, no reconnection, no queue: an answer within the deadline or none. */
function shortLived(timeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    enableReadyCheck: false,
  };
}

async function ask<T>(client: Redis, question: () => Promise<T>): Promise<T> {
  client.on('error', () => {});
  try {
    await client.connect();
    return await question();
  } finally {
    client.disconnect();
  }
}

/** The node answers (as a primary, when `role` says so). */
async function answers(client: Redis, role?: 'master'): Promise<boolean> {
  try {
    return await ask(client, async () =>
      role === undefined ? (await client.ping()) === 'PONG' : ((await client.call('ROLE')) as [string])[0] === role,
    );
  } catch {
    return false;
  }
}

async function firstAnswer<A, T>(candidates: A[], question: (candidate: A) => Promise<T>): Promise<T | undefined> {
  for (const candidate of candidates) {
    try {
      return await question(candidate);
    } catch {
      // That one did not answer: the next may.
    }
  }
  return undefined;
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => {
    promise ??= make();
    return promise;
  };
}
