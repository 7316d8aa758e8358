// IBKR's health: `connected` means a data call would work now. The auth status is the cheap first word
// (one call), but it can claim a session the data calls refuse (users report "no bridge" from a gateway
// whose status says authenticated), so a data read confirms it: once per brokerage session, and again
// after any data call was refused. A session the status shows missing gets its one recovery attempt. A
// gateway nobody is logged in to (a 401, or the status a logout leaves) is said so, with its login page.
import { ApiError, driftOf } from '../../core/errors.js';
import type { HealthCheck } from '../../broker/timed-health.js';
import { type IbkrGateway, type SessionFailure, SessionRefusedError } from './ibkr-gateway.js';
import { parseAuthStatus } from './parse-session.js';

export interface DataCheck {
  /** A data read is due: the session is new (not yet read from) or a data call was refused since. */
  due(): boolean;
  /** The data read; throws SessionRefusedError when the gateway refuses it even after mending. */
  run(): Promise<void>;
}

export async function checkIbkrSession(gateway: IbkrGateway, data: DataCheck): Promise<HealthCheck> {
  // The gateway serves its login page at its root (it redirects to /sso/Login), on IBKR_GATEWAY_URL's host and port.
  const login = `log in at ${gateway.origin}/ (the gateway's login page)`;
  try {
    const answer = await gateway.send('/iserver/auth/status');
    let note = '';
    if (answer.kind === 'logged_out') {
      // Usually a person must log in; a lapsed session can sometimes be re-authenticated, so try once.
      const outcome = await gateway.recover('not_authenticated');
      if (outcome !== 'ready') return unauthenticated(outcome, login);
      note = ' The session was re-authenticated.';
    } else if (answer.kind !== 'ok') {
      const unreadable =
        answer.kind === 'error' && answer.drift !== undefined ? { reason: answer.drift, message: answer.message } : undefined;
      return {
        status: 'disconnected',
        message: `The IBKR gateway answered with an error (HTTP ${answer.status}); restart it if this persists.`,
        ...(unreadable === undefined ? {} : { unreadable }),
      };
    } else {
      const auth = parseAuthStatus(answer.json);
      if (auth.authenticated && !auth.connected)
        return {
          status: 'disconnected',
          message: "The IBKR gateway is logged in but has lost its connection to IBKR's servers; it reconnects by itself, or restart it.",
        };
      if (!(auth.authenticated && auth.established)) {
        const outcome = await gateway.recover(auth.established ? 'not_authenticated' : 'no_session');
        // After a logout no brokerage session can start: the login is what is missing, not the session.
        if (outcome !== 'ready') return unauthenticated(auth.loggedOut ? 'logged_out' : outcome, login);
        note = ' The brokerage session was re-established.';
      }
      if (auth.competing) note += ' Another session (TWS or the mobile app) competes for market data.';
    }
    if (data.due()) {
      try {
        await data.run();
      } catch (error) {
        // A refusal no wording explains, with a status that shows the session ready: the gateway's own fault.
        if (error instanceof ApiError && error.code === 'UPSTREAM_ERROR' && driftOf(error) === undefined)
          return {
            status: 'disconnected',
            message: `The IBKR gateway reports a session but fails data calls (${error.message}); restart it if this persists.`,
          };
        throw error;
      }
    }
    return { status: 'connected', message: `Connected to IBKR through the Client Portal Gateway.${note}` };
  } catch (error) {
    if (error instanceof SessionRefusedError) return unauthenticated(error.outcome, login);
    return failed(error, gateway.origin, login);
  }
}

function unauthenticated(outcome: SessionFailure, login: string): HealthCheck {
  return {
    status: 'unauthenticated',
    message:
      outcome === 'logged_out'
        ? `The IBKR gateway is running but nobody is logged in: ${login}.`
        : `The IBKR gateway is logged in but refuses market data: it has no brokerage session and could not start one (accounts and positions still read). Close other IBKR sessions that may hold it (TWS, the mobile app, another gateway), or ${login} again.`,
  };
}

function failed(error: unknown, origin: string, login: string): HealthCheck {
  const apiError = error instanceof ApiError ? error : new ApiError('UPSTREAM_ERROR', 'the IBKR gateway check failed');
  if (apiError.code === 'UPSTREAM_TIMEOUT')
    return { status: 'disconnected', message: `The IBKR gateway at ${origin} did not answer in time.` };
  if (/not running|not reachable/.test(apiError.message))
    return { status: 'disconnected', message: `Nothing answers at ${origin}: start the IBKR Client Portal Gateway, then ${login}.` };
  const drift = driftOf(error);
  return {
    status: 'disconnected',
    message: `${apiError.message.charAt(0).toUpperCase()}${apiError.message.slice(1)}.`,
    ...(drift === undefined ? {} : { unreadable: { reason: drift, message: apiError.message } }),
  };
}
