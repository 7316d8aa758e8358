// A loopback server that answers a provider's requests with its recorded bytes (test/fixtures/recorded/):
// the service's live code path, end to end, against what the real provider sent. A request matches a
// recording with the same method and path whose every recorded query value it carries (keys excluded);
// the one naming the most parameters wins; several recordings of one request are served in order (the
// last repeats), as IBKR's empty first snapshot and its later populated one. Anything else is a 404 the
// test can see in `misses`.
import type { TestContext } from 'node:test';
import { SimulatedUpstream, type SimRequest, type SimResponse } from '../../src/sandbox/simulated-upstream.js';
import type { Loaded } from './recorded.js';

/** Query parameters that carry credentials: never part of a recording's request. */
const CREDENTIAL_PARAMS = new Set(['apikey', 'apiKey']);

export class ReplayUpstream extends SimulatedUpstream {
  readonly misses: string[] = [];
  readonly served: string[] = [];
  private readonly next = new Map<string, number>();

  constructor(
    name: string,
    private readonly recordings: readonly Loaded[],
    /** The base path the provider's paths hang off (IBKR's `/v1/api`). */
    private readonly base = '',
  ) {
    super({ name: `replay-${name}`, handler: (req) => (this as ReplayUpstream).answer(req) });
  }

  private answer(req: SimRequest): SimResponse {
    const path = req.url.pathname.startsWith(this.base) ? req.url.pathname.slice(this.base.length) : req.url.pathname;
    const params = [...req.url.searchParams].filter(([k]) => !CREDENTIAL_PARAMS.has(k));
    const candidates = this.recordings
      .filter((r) => r.request.method === req.method && r.request.path === path)
      .filter((r) => Object.entries(r.request.query ?? {}).every(([k, v]) => req.url.searchParams.get(k) === v))
      .map((r) => ({ r, score: Object.keys(r.request.query ?? {}).length }));
    const best = Math.max(-1, ...candidates.map((c) => c.score));
    const matches = candidates.filter((c) => c.score === best).map((c) => c.r);
    const asked = `${req.method} ${path}${params.length > 0 ? `?${new URLSearchParams(params)}` : ''}`;
    if (matches.length === 0) {
      this.misses.push(asked);
      return { status: 404, body: { replay: `no recording for ${asked}` } };
    }
    const key = matches.map((r) => r.name).join(',');
    const index = this.next.get(key) ?? 0;
    this.next.set(key, index + 1);
    const recorded = matches[Math.min(index, matches.length - 1)] as Loaded;
    this.served.push(recorded.name);
    return {
      status: recorded.status,
      body: recorded.text,
      headers: recorded.contentType === undefined ? {} : { 'content-type': recorded.contentType },
    };
  }
}

export async function startReplay(t: TestContext, name: string, recordings: readonly Loaded[], base = ''): Promise<ReplayUpstream> {
  const replay = new ReplayUpstream(name, recordings, base);
  await replay.listen();
  t.after(() => replay.close());
  return replay;
}
