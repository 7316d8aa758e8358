// Entry point: validate configuration, start the built-in sandbox when in sandbox mode, listen, and shut
// down gracefully (in-flight requests finish, stores close) on SIGTERM/SIGINT.
// First, before anything else loads: see next-tick-shape.ts.
import './process/next-tick-shape.js';
import closeWithGrace from 'close-with-grace';
import { brokerExposure } from './broker/broker-access.js';
import { type Config, ConfigError, loadConfig } from './core/config.js';
import { trustProxyRisk } from './core/networks.js';
import { loadEnvFile } from './core/env-file.js';
import { defaultMetricsPortTaken, type ListenTarget, listenProblem, METRICS_ADDRESS, SERVICE_ADDRESS } from './process/listen-error.js';
import { createLogger } from './log/logger.js';
import { logProcessWarnings } from './process/process-warnings.js';
import type { Sandbox } from './sandbox/index.js';
import { SHUTDOWN_DRAIN_MS } from './process/shutdown.js';
import { startFailureMessage } from './process/start-failure.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  loadEnvFile();
  let config = readConfig();
  let sandbox: Sandbox | undefined;
  if (config.mode === 'sandbox') {
    // Live mode never loads the simulators.
    const { sandboxConfig, sandboxOptionsFor, startSandbox } = await import('./sandbox/index.js');
    sandbox = await startSandbox(sandboxOptionsFor(config));
    config = sandboxConfig(config, sandbox);
  }
  const logger = createLogger(config);
  logProcessWarnings(logger);
  // Imported here, not statically, so a native module that fails to load reaches startFailureMessage.
  const { buildApp } = await import('./app.js');
  const app = await buildApp(config, { logger });

  closeWithGrace({ delay: SHUTDOWN_DRAIN_MS, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down');
    await app.close();
    await sandbox?.close();
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
  });

  /** A listen failure is one config line, once the app and the sandbox are closed (stores close cleanly). */
  const explain = async (error: unknown, target: ListenTarget, names = SERVICE_ADDRESS): Promise<never> => {
    const problem = listenProblem(error, target, names);
    if (problem === undefined) throw error;
    process.stderr.write(`config error: ${problem}\n`);
    await app.close();
    await sandbox?.close();
    process.exit(1);
  };
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => explain(error, config));
  let metricsSkipped: string | undefined;
  const metrics = await app.metricsListener.listen().catch((error: unknown) => {
    metricsSkipped = defaultMetricsPortTaken(error, config.metrics, config.metrics.portExplicit);
    if (metricsSkipped === undefined) return explain(error, config.metrics, METRICS_ADDRESS);
    logger.warn({ port: config.metrics.port, host: config.metrics.host }, metricsSkipped);
    return undefined;
  });
  const { port } = app.server.address() as { port: number };
  const publicMetrics = config.metrics.token === undefined ? 'off' : '/metrics with METRICS_TOKEN';
  logger.info(
    {
      mode: config.mode,
      url: `${config.tls ? 'https' : 'http'}://${config.host}:${port}`,
      metrics: metrics ?? (metricsSkipped === undefined ? publicMetrics : `${publicMetrics} (port ${config.metrics.port} in use)`),
      upstreams: sandbox ? 'built-in simulators on loopback (no keys, no network)' : 'live providers',
    },
    config.mode === 'sandbox' ? 'market data proxy started in SANDBOX mode' : 'market data proxy started in LIVE mode',
  );
  const exposure = brokerExposure(config);
  if (exposure !== undefined) logger.warn({ broker: config.broker.kind }, exposure);
  // On loopback, or off it with TRUST_PROXY_ANY=yes (config.ts refuses it otherwise): still said at every start.
  const trustRisk = trustProxyRisk(config.trustProxy, config.host);
  if (trustRisk !== undefined) logger.warn({ trustProxy: config.trustProxy }, trustRisk);
  // Request lines are buffered (logger.ts); the start is shown at once.
  logger.flush();
}

main().catch((error: unknown) => {
  process.stderr.write(`${startFailureMessage(error)}\n`);
  process.exit(1);
});
