// An optional upstream (provider A or B without a key, no broker, the overview switched off) is held as one
// value: configured with its client, or not configured with the reason in words a user can act on. Code
// that can do without it tests `configured`; code that needs it calls `use`, which raises the one answer a
// caller gets for it (503 PROVIDER_NOT_CONFIGURED with the reason), so routes stay registered and the API
// surface never depends on configuration.
import { ApiError } from './errors.js';

export type Configured<T> = { readonly configured: true; readonly client: T } | NotConfigured;

export interface NotConfigured {
  readonly configured: false;
  readonly reason: string;
}

export function configured<T>(client: T): Configured<T> {
  return { configured: true, client };
}

export function notConfigured(reason: string): NotConfigured {
  return { configured: false, reason };
}

/** `client` when there is one, else `reason` for an absent one. */
export function optional<T>(client: T | undefined, reason: string): Configured<T> {
  return client === undefined ? notConfigured(reason) : configured(client);
}

export function use<T>(upstream: Configured<T>): T {
  if (!upstream.configured) throw new ApiError('PROVIDER_NOT_CONFIGURED', upstream.reason);
  return upstream.client;
}
