// Yahoo's chart path as its clients write it, for tests that ask the simulator or count its requests:
// written here from the wire format (UPSTREAMS.md), not taken from the simulator under test.

/** `^GSPC` -> `/v8/finance/chart/%5EGSPC`. */
export function chartPath(symbol: string): string {
  return `/v8/finance/chart/${encodeURIComponent(symbol)}`;
}
