// What fair shares did, per budget: calls sent and refusals for a spent share by caller label (a client key's
// name, `anonymous` or `service`: never an address, so the metrics' series stay few), and which accounts were
// held to their share lately, for the status.
import type { Caller } from '../core/caller.js';

/** Accounts remembered as held, at most: beyond it the oldest are forgotten (the status counts, it does not list). */
const MAX_HELD = 10_000;

export class ShareTally {
  readonly calls = new Map<string, number>();
  readonly refusals = new Map<string, number>();
  /** Account -> when it was last held to its share (in-process; the Redis guard keeps its own, shared). */
  private readonly held = new Map<string, number>();

  sent(caller: Pick<Caller, 'label'>): void {
    this.calls.set(caller.label, (this.calls.get(caller.label) ?? 0) + 1);
  }

  refused(callers: readonly Pick<Caller, 'label' | 'account'>[], now: number): void {
    for (const caller of callers) {
      this.refusals.set(caller.label, (this.refusals.get(caller.label) ?? 0) + 1);
      this.held.delete(caller.account);
      if (this.held.size >= MAX_HELD) this.held.delete(this.held.keys().next().value as string);
      this.held.set(caller.account, now);
    }
  }

  /** Accounts held to their share since `since`. */
  heldSince(since: number): number {
    let n = 0;
    for (const at of this.held.values()) if (at > since) n += 1;
    return n;
  }
}
