// The simulated Tastytrade market's busiest stocks (shortest tick intervals first), for tests that need
// several ticks a second from the DXLink feed.
import type { TastytradeSimulator } from '../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { UNIVERSE } from '../../src/sandbox/universe.js';

export function busiestStocks(sim: TastytradeSimulator): string[] {
  const interval = (symbol: string) => sim.market.tickIntervalMs({ ours: symbol, kind: 'equity' });
  return UNIVERSE.filter((i) => !i.symbol.startsWith('^') && !i.symbol.includes('-') && !i.symbol.includes('='))
    .map((i) => i.symbol)
    .sort((a, b) => interval(a) - interval(b));
}
