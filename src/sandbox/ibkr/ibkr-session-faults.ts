// How the simulated gateway refuses data without a brokerage session, as users of public Client Portal
// clients report the real one does (test/fixtures/recorded/ibkr/, held there by the conformance test), and
// the ways a session can fail to come back. Switched in code or over HTTP at /__sandbox/ibkr.
import type { SimResponse } from '../simulated-upstream.js';

/** Each recorded answer of an /iserver data call made without a brokerage session. */
export const SESSION_REFUSALS = {
  /** Voyz/ibeam#117. */
  'init-session-first': { status: 400, body: { error: 'Init session first', statusCode: 400 } },
  /** Voyz/ibind#44. */
  'no-bridge': { status: 400, body: { error: 'Bad Request: no bridge', statusCode: 400 } },
  /** Voyz/ibeam#254: logged in, the brokerage session not authenticated. */
  'not-authenticated': { status: 401, body: { error: 'not authenticated', statusCode: 401 } },
} as const satisfies Record<string, SimResponse>;

/** @internal */
export type SessionRefusalName = keyof typeof SESSION_REFUSALS;

export interface IbkrSessionFaults {
  /** The answer /iserver data calls get without a brokerage session: a recorded one by name, or a test's own wording. */
  refusal: SessionRefusalName | SimResponse;
  /** ssodh/init and reauthenticate do not bring the brokerage session back (a competing login, IBKR's side down). */
  unrecoverable: boolean;
  /** The auth status and the tickle claim an established session while data calls are refused (users report the two disagree). */
  statusClaimsSession: boolean;
}

export const DEFAULT_SESSION_FAULTS: IbkrSessionFaults = {
  refusal: 'init-session-first',
  unrecoverable: false,
  statusClaimsSession: false,
};

export function refusalAnswer(faults: IbkrSessionFaults): SimResponse {
  return typeof faults.refusal === 'string' ? SESSION_REFUSALS[faults.refusal] : faults.refusal;
}

/** Faults from a /__sandbox/ibkr POST body (refusals by name only), or the reason they are not valid. */
export function readSessionFaults(body: unknown): Partial<IbkrSessionFaults> | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'a JSON object is required';
  const { refusal, unrecoverable, statusClaimsSession } = body as Record<string, unknown>;
  const faults: Partial<IbkrSessionFaults> = {};
  if (refusal !== undefined) {
    if (typeof refusal !== 'string' || !(refusal in SESSION_REFUSALS))
      return `refusal must be one of ${Object.keys(SESSION_REFUSALS).join(', ')}`;
    faults.refusal = refusal as SessionRefusalName;
  }
  for (const [name, value] of [
    ['unrecoverable', unrecoverable],
    ['statusClaimsSession', statusClaimsSession],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'boolean') return `${name} must be true or false`;
    faults[name] = value;
  }
  return faults;
}
