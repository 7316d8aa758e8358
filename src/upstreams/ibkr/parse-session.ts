// The gateway's own view of its session: /iserver/auth/status and the authStatus inside /tickle.
import { ApiError } from '../../errors.js';
import { toText } from '../../broker/numbers.js';

export interface AuthStatus {
  /** A brokerage session exists and is authenticated. */
  authenticated: boolean;
  established: boolean;
  /** The gateway is connected to IBKR's servers. */
  connected: boolean;
  /** Another session (TWS, mobile) competes for the brokerage session. */
  competing: boolean;
  message: string;
}

function asObject(json: unknown): Record<string, unknown> | undefined {
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

function readAuth(body: Record<string, unknown>): AuthStatus {
  return {
    authenticated: body.authenticated === true,
    established: body.established === true,
    connected: body.connected === true,
    competing: body.competing === true,
    message: toText(body.message) ?? toText(body.fail) ?? '',
  };
}

/** GET /iserver/auth/status. */
export function parseAuthStatus(json: unknown): AuthStatus {
  const body = asObject(json);
  if (body === undefined || typeof body.authenticated !== 'boolean') {
    throw new ApiError('UPSTREAM_ERROR', 'the IBKR gateway sent an auth status without "authenticated"');
  }
  return readAuth(body);
}

/** POST /tickle: the brokerage session's state, or null when the answer carries none (no brokerage session yet). */
export function parseTickle(json: unknown): AuthStatus | null {
  const body = asObject(json);
  if (body === undefined) throw new ApiError('UPSTREAM_ERROR', 'the IBKR gateway sent a tickle answer that is not an object');
  const authStatus = asObject(asObject(body.iserver)?.authStatus);
  return authStatus === undefined ? null : readAuth(authStatus);
}
