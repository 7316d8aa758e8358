// The header list the hot path (hot-path.ts) sends for one remembered answer: the pipeline's headers as they
// were, with slots for what differs per request.

/** The caller's rate-limit counters, when the limit is on. */
export type LimitValues = { remaining: number; reset: number } | undefined;

/**
 * An answer's headers as the flat [name, value, ...] list Node takes as is, built once per entry and
 * rewritten in place for each request (Node has turned it into the header block by the time writeHead
 * returns), rather than spread into a new ~40-slot list per answer. Spreading a header object and adding
 * to it instead cost ~10 µs per answer.
 */
export class ReplayedHead {
  readonly list: string[];
  /** Where the request id's value sits; Age and the rate-limit values follow at fixed offsets. */
  private readonly at: number;
  /** Where Access-Control-Allow-Origin's value sits, when this head has one. */
  private readonly originAt: number | undefined;

  constructor(
    replayed: readonly string[],
    /** Whether the list has the rate-limit slots; without them, those offsets hold the tail's headers. */
    private readonly withLimit: boolean,
    tail: readonly string[],
    /** Where in `replayed` Access-Control-Allow-Origin goes (as @fastify/cors puts it: before the exposed headers); none if undefined. */
    origin?: number,
  ) {
    const head =
      origin === undefined ? [...replayed] : [...replayed.slice(0, origin), 'access-control-allow-origin', '', ...replayed.slice(origin)];
    this.originAt = origin === undefined ? undefined : origin + 1;
    this.at = head.length + 1;
    const limit = withLimit ? ['x-ratelimit-remaining', '', 'x-ratelimit-reset', ''] : [];
    this.list = [...head, 'x-request-id', '', 'x-cache', 'HIT', 'age', '', ...limit, ...tail];
  }

  /** `origin`: Access-Control-Allow-Origin's value, on a head built with its slot. */
  fill(id: string, age: string, limit: LimitValues, origin: string | undefined): string[] {
    this.list[this.at] = id;
    this.list[this.at + 4] = age;
    if (this.withLimit && limit !== undefined) {
      this.list[this.at + 6] = String(limit.remaining);
      this.list[this.at + 8] = String(limit.reset);
    }
    if (this.originAt !== undefined) this.list[this.originAt] = origin ?? '';
    return this.list;
  }
}
