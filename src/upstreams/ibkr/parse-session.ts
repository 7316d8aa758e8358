// The gateway's own view of its session: /iserver/auth/status and the authStatus inside /tickle.
import { UnreadableAnswerError } from '../../core/errors.js';
import { toText } from '../../broker/numbers.js';

export interface AuthStatus {
  /** A brokerage session exists and is authenticated. */
  authenticated: boolean;
  /**
   * A brokerage session exists (authenticated or not): re-authentication can restore it, where without one
   * a new session must be started. `established` when the gateway says so; captured answers of 2022 and
   * 2023 carry no such key, and then a session exists while the gateway is authenticated or still connected
   * to IBKR's servers (the recorded answer without a session has `connected: false`).
   */
  established: boolean;
  /** The gateway is connected to IBKR's servers. */
  connected: boolean;
  /** Another session (TWS, mobile) competes for the brokerage session. */
  competing: boolean;
  message: string;
  /**
   * Nobody is logged in to the gateway: a build that says `established` says all three false (recorded
   * after POST /logout, build 10.45, 2026). Logged in without a brokerage session, the gateway stays
   * connected to IBKR's servers; older builds, which send no `established`, leave the two apart.
   */
  loggedOut: boolean;
}

function asObject(json: unknown): Record<string, unknown> | undefined {
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

function readAuth(body: Record<string, unknown>): AuthStatus {
  const authenticated = body.authenticated === true;
  const connected = body.connected === true;
  return {
    authenticated,
    established: typeof body.established === 'boolean' ? body.established : authenticated || connected,
    connected,
    competing: body.competing === true,
    message: toText(body.message) ?? toText(body.fail) ?? '',
    loggedOut: body.established === false && !authenticated && !connected,
  };
}

/** GET /iserver/auth/status. */
export function parseAuthStatus(json: unknown): AuthStatus {
  const body = asObject(json);
  if (body === undefined || typeof body.authenticated !== 'boolean') {
    throw new UnreadableAnswerError('auth-status', 'the IBKR gateway sent an auth status without "authenticated"');
  }
  return readAuth(body);
}

/** POST /tickle: the brokerage session's state, or null when the answer carries none (no brokerage session yet). */
export function parseTickle(json: unknown): AuthStatus | null {
  const body = asObject(json);
  if (body === undefined) throw new UnreadableAnswerError('tickle', 'the IBKR gateway sent a tickle answer that is not an object');
  const authStatus = asObject(asObject(body.iserver)?.authStatus);
  return authStatus === undefined ? null : readAuth(authStatus);
}

/** POST /tickle's session value: what the websocket accepts as {"session":"…"} when no cookie authorises it. */
export function parseTickleSession(json: unknown): string | null {
  return toText(asObject(json)?.session);
}
