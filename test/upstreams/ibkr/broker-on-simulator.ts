// An IBKR broker wired to its own simulated gateway, both closed when the test ends.
import type { TestContext } from 'node:test';
import pino from 'pino';
import { createIbkrSimulator, type IbkrSimulator, type IbkrSimulatorOptions } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { IbkrBroker, type IbkrBrokerOptions } from '../../../src/upstreams/ibkr/ibkr-broker.js';

export async function brokerOnSimulator(
  t: TestContext,
  options: Partial<IbkrBrokerOptions> = {},
  simOptions: IbkrSimulatorOptions = {},
): Promise<{ sim: IbkrSimulator; broker: IbkrBroker }> {
  const sim = await createIbkrSimulator(simOptions);
  await sim.listen();
  t.after(() => sim.close());
  const broker = new IbkrBroker({
    url: sim.baseUrl,
    tlsVerify: false,
    timeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    tickleIntervalMs: 0,
    ...options,
  });
  t.after(() => broker.close());
  return { sim, broker };
}
