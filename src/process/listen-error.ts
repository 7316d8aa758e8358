// A listen failure is a configuration problem (a host or port variable) more often than a fault: it gets
// one clear line in the config errors' style rather than a raw getaddrinfo/errno message.

export interface ListenTarget {
  host: string;
  port: number | undefined;
}

/** The variables that set a listener's address: HOST and PORT for the service, METRICS_* for metrics. */
export interface AddressNames {
  host: string;
  port: string;
}
export const SERVICE_ADDRESS: AddressNames = { host: 'HOST', port: 'PORT' };
export const METRICS_ADDRESS: AddressNames = { host: 'METRICS_HOST', port: 'METRICS_PORT' };

export function listenProblem(error: unknown, { host, port }: ListenTarget, names = SERVICE_ADDRESS): string | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return `${names.host} ${host} is not an address or a name that resolves (e.g. 127.0.0.1, 0.0.0.0, ::)`;
    case 'EADDRNOTAVAIL':
      return `${names.host} ${host} is not an address of this machine`;
    case 'EADDRINUSE':
      return `${names.port} ${port} is already in use on ${host} (another process listens there)`;
    case 'EACCES':
      return `${names.port} ${port} needs privileges this process does not have (use a port above 1023)`;
    default:
      return undefined;
  }
}

/**
 * The warning for a metrics port that is taken when nobody chose it: a second instance on one host with
 * default settings should still serve its API, so it goes on without the listener and says how to get one.
 * Undefined when the port was set explicitly (then it is a config error, as for PORT) or the failure is
 * something else.
 */
export function defaultMetricsPortTaken(error: unknown, { host, port }: ListenTarget, portExplicit: boolean): string | undefined {
  if (portExplicit || (error as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return undefined;
  return `metrics listener not started: port ${port} is in use on ${host}; set METRICS_PORT to another port, 0 for any free one, or off`;
}
