// One-time tickets for broker stream topics. A browser's EventSource cannot send an Authorization header,
// and a lasting token in a URL would reach proxies' and our own request logs; so a caller that may read broker
// data (token or network) asks for a ticket over an ordinary request, and puts that in the stream's URL. A
// ticket is redeemed once, within TICKET_TTL_MS, on any replica: a URL copied from a log is worth nothing.
// Only a hash of the ticket is stored.
import { createHash, randomBytes } from 'node:crypto';
import type { SharedStore } from '../store/degraded-mode.js';

export const TICKET_TTL_MS = 30_000;

export interface StreamTicket {
  ticket: string;
  expiresAt: string;
}

export class StreamTickets {
  /** Tickets issued while Redis was away, and every ticket without Redis: hash -> expiry. */
  private readonly local = new Map<string, number>();

  constructor(
    private readonly shared: SharedStore | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async issue(): Promise<StreamTicket> {
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + TICKET_TTL_MS;
    const id = hash(ticket);
    if (!(await this.storeShared(id))) {
      this.prune();
      this.local.set(id, expiresAt);
    }
    return { ticket, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** True once for a ticket issued here or on another replica, within its lifetime. */
  async redeem(ticket: string): Promise<boolean> {
    if (!/^[\w-]{43}$/.test(ticket)) return false;
    const id = hash(ticket);
    const expiresAt = this.local.get(id);
    if (expiresAt !== undefined) {
      this.local.delete(id);
      return expiresAt > this.now();
    }
    const shared = this.shared;
    if (shared === undefined) return false;
    return shared.degraded.attempt(
      'stream-tickets',
      async (client) => (await client.del(ticketKey(shared, id))) === 1,
      () => false,
    );
  }

  /** True once stored where every replica can redeem it. */
  private async storeShared(id: string): Promise<boolean> {
    const shared = this.shared;
    if (shared === undefined) return false;
    return shared.degraded.attempt(
      'stream-tickets',
      async (client) => (await client.set(ticketKey(shared, id), '1', 'PX', TICKET_TTL_MS)) === 'OK',
      () => false,
    );
  }

  private prune(): void {
    const now = this.now();
    for (const [id, expiresAt] of this.local) if (expiresAt <= now) this.local.delete(id);
  }
}

function ticketKey(shared: SharedStore, id: string): string {
  return shared.redis.key(`broker-ticket:${id}`);
}

function hash(ticket: string): string {
  return createHash('sha256').update(ticket).digest('base64url');
}
