// Both brokers report health the same way: run their own cheap check, time it, derive the flags.
import type { BrokerHealth, BrokerStatus } from './broker.js';

export interface HealthCheck {
  status: BrokerStatus;
  message: string;
  unreadable?: BrokerHealth['unreadable'];
}

/** `proxy`: the outbound proxy the broker is reached through (host:port), reported beside the state. */
export async function timedHealth(
  broker: BrokerHealth['broker'],
  check: () => Promise<HealthCheck>,
  proxy?: string,
): Promise<BrokerHealth> {
  const started = performance.now();
  const { status, message, unreadable } = await check();
  return {
    broker,
    status,
    authenticated: status === 'connected',
    connected: status === 'connected' || status === 'unauthenticated',
    checkedAt: new Date().toISOString(),
    latencyMs: Math.round(performance.now() - started),
    message,
    ...(proxy === undefined ? {} : { proxy }),
    ...(unreadable === undefined ? {} : { unreadable }),
  };
}
