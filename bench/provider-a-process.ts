// The simulated Alpha Vantage in a process of its own, for benchmarks that count provider calls under load:
// in the load generator's process a stall of the event loop (hundreds of ms at 180 req/s on two cores)
// would timestamp a call late and make two calls look closer than they reached the provider. Prints
// "LISTENING <port>", then "CALL <ms since epoch>" for every /query it receives.
import { createAlphaVantageSimulator } from '../src/sandbox/alpha-vantage/alpha-vantage-simulator.js';
import { SANDBOX_CREDENTIALS } from '../src/sandbox/index.js';

const plan = JSON.parse(process.env.PROVIDER_A_PLAN ?? '{}') as { callsPerMinute?: number; callsPerDay?: number; burstPerSecond?: number };
const sim = createAlphaVantageSimulator({ validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey], ...plan });
sim.on('request', (event: { path: string }) => {
  if (event.path === '/query') process.stdout.write(`CALL ${Date.now()}\n`);
});
await sim.listen();
process.stdout.write(`LISTENING ${new URL(sim.origin).port}\n`);
process.once('SIGTERM', () => void sim.close().then(() => process.exit(0)));
