// `npm run sandbox`: runs every simulated upstream on its own, for manual runs, benchmarks and pointing a
// live-mode service at them. Prints where each one listens, the environment that points the service at
// it, and how to flip its faults; stops cleanly on SIGINT/SIGTERM.
//   SANDBOX_PORT_BASE=4100 npm run sandbox    fixed ports 4100, 4101, … instead of ephemeral ones
//   ALPHA_VANTAGE_CALLS_PER_MINUTE=0 …        the simulated Alpha Vantage plan follows the service's settings
import { loadConfig } from '../core/config.js';
import { FAULT_KINDS, type SimulatedUpstream } from './simulated-upstream.js';
import { SANDBOX_CREDENTIALS, type Sandbox, sandboxOptionsFor, startSandbox } from './index.js';
import { SESSION_REFUSALS } from './ibkr/ibkr-session-faults.js';
import { SESSION_STATES } from './ibkr/ibkr-simulator.js';

/** The service's environment for one simulator, by simulator name; unknown names get none. */
function environmentFor(upstream: SimulatedUpstream): Record<string, string> {
  const origin = upstream.origin;
  switch (upstream.name) {
    case 'alpha-vantage':
      return { ALPHA_VANTAGE_URL: `${origin}/query`, ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey };
    case 'massive':
      return { MASSIVE_URL: origin, MASSIVE_API_KEY: SANDBOX_CREDENTIALS.massiveKey };
    case 'yahoo':
      return { YAHOO_URL: origin };
    case 'ibkr':
      return { BROKER: 'ibkr', IBKR_GATEWAY_URL: `${origin}/v1/api`, IBKR_TLS_VERIFY: 'false' };
    case 'tastytrade':
      return {
        BROKER: 'tastytrade',
        TASTYTRADE_URL: origin,
        TASTYTRADE_CLIENT_SECRET: SANDBOX_CREDENTIALS.tastytradeClientSecret,
        TASTYTRADE_REFRESH_TOKEN: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
      };
    default:
      return {};
  }
}

const assignments = (env: Record<string, string>) =>
  Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');

export function describeSandbox(sandbox: Sandbox): string {
  const upstreams = sandbox.all();
  const lines = ['Sandbox upstreams (loopback, sandbox credentials only):', ''];
  for (const upstream of upstreams) {
    lines.push(`  ${upstream.name.padEnd(14)} ${upstream.origin}`);
    const env = environmentFor(upstream);
    if (Object.keys(env).length > 0) lines.push(`  ${''.padEnd(14)} ${assignments(env)}`);
  }
  // One broker at a time: the first simulated broker goes into the combined line.
  let brokerChosen = false;
  const combined: Record<string, string> = { DATA_MODE: 'live' };
  for (const upstream of upstreams) {
    const env = environmentFor(upstream);
    if ('BROKER' in env) {
      if (brokerChosen) continue;
      brokerChosen = true;
    }
    Object.assign(combined, env);
  }
  const first = upstreams[0];
  lines.push(
    '',
    'Point the service at all of them:',
    `  ${assignments(combined)} npm run dev`,
    '',
    'Try Alpha Vantage:',
    `  curl '${sandbox.alphaVantage.origin}/query?function=GLOBAL_QUOTE&symbol=MSFT&apikey=${SANDBOX_CREDENTIALS.alphaVantageKey}'`,
    '',
    `Faults (${FAULT_KINDS.join(', ')}), per upstream:`,
    `  curl -X POST ${first?.origin}/__sandbox/faults -H 'content-type: application/json' -d '{"fault":"http5xx","status":503,"remaining":3}'`,
    `  curl -X POST ${first?.origin}/__sandbox/faults -H 'content-type: application/json' -d '{"latencyMs":2000,"fault":null}'`,
    `  curl ${first?.origin}/__sandbox/faults          # current faults`,
    `  curl -X DELETE ${first?.origin}/__sandbox/faults # clear`,
    `  curl ${first?.origin}/__sandbox/stats           # requests per path (DELETE resets)`,
    '',
    `IBKR session (${SESSION_STATES.join(', ')}) and how a missing brokerage session shows (${Object.keys(SESSION_REFUSALS).join(', ')}):`,
    `  curl -X POST ${sandbox.ibkr.origin}/__sandbox/ibkr -d '{"session":"no_session","refusal":"no-bridge","unrecoverable":false,"statusClaimsSession":false}'`,
    `  curl ${sandbox.ibkr.origin}/__sandbox/ibkr          # current state (DELETE: connected, no faults)`,
    '',
    'Ctrl-C stops them.',
  );
  return lines.join('\n');
}

function readPortBase(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.SANDBOX_PORT_BASE;
  if (raw === undefined || raw.trim() === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65_000) {
    throw new Error(`SANDBOX_PORT_BASE must be a port number between 1 and 65000, got "${raw}"`);
  }
  return port;
}

async function main(): Promise<void> {
  // The same validation as the service: a bad ALPHA_VANTAGE_CALLS_PER_MINUTE stops here with its message.
  const sandbox = await startSandbox({ ...sandboxOptionsFor(loadConfig(process.env)), portBase: readPortBase(process.env) });
  process.stdout.write(`${describeSandbox(sandbox)}\n`);
  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`\n${signal}: closing the sandbox\n`);
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`failed to close: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`sandbox failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
