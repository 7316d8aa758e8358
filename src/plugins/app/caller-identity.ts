// Who each request is (src/core/caller.ts), decided once, before the broker rule and the per-caller limit: a
// client key sent as a bearer token (CLIENT_KEYS), or the address TRUST_PROXY lets the service believe. The rest
// of the request runs as that caller, so every provider call it causes is put to its account.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { addressCaller, type Caller, runAs, scopesFor } from '../../core/caller.js';
import type { ClientKeys } from '../../core/client-keys.js';
import { ApiError } from '../../core/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

/** The request's caller, or the 401/403 its key earns. */
function identify(
  keys: ClientKeys,
  authorization: string | undefined,
  address: () => string | undefined,
  route: string | undefined,
): Caller | ApiError {
  const verdict = keys.verdict(authorization);
  const scopes = scopesFor(route);
  // Where a key means nothing (status, docs, metrics) a wrong one is ignored; the broker routes judge their own tokens.
  if (verdict.kind === 'none' || (verdict.kind === 'invalid' && scopes === undefined)) return addressCaller(address());
  if (verdict.kind === 'invalid') {
    return new ApiError(
      'INVALID_CLIENT_KEY',
      'the bearer token is not one of the client keys (CLIENT_KEYS): send a valid key, or none to be served as an anonymous caller',
      { headers: { 'www-authenticate': 'Bearer realm="market-data-proxy", error="invalid_token"' } },
    );
  }
  const { key } = verdict.caller;
  if (scopes !== undefined && !scopes.some((scope) => key.scopes.has(scope))) {
    return new ApiError(
      'CLIENT_KEY_FORBIDDEN',
      `the client key "${key.name}" may not be used here: it needs the scope ${scopes.join(' or ')}`,
      {
        headers: { 'www-authenticate': `Bearer realm="market-data-proxy", error="insufficient_scope", scope="${scopes.join(' ')}"` },
      },
    );
  }
  return verdict.caller;
}

export const callerIdentity = fp(
  async (app: FastifyInstance, { keys }: { keys: ClientKeys }) => {
    app.decorateRequest('caller', null as unknown as Caller);
    app.addHook('onRequest', function callerIdentity(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
      // A preflight carries no credentials: it is answered for the anonymous caller of its address.
      const authorization = request.method === 'OPTIONS' ? undefined : request.headers.authorization;
      const caller = identify(keys, authorization, () => request.ip, request.routeOptions.url);
      if (caller instanceof ApiError) {
        request.caller = addressCaller(request.ip);
        done(caller);
        return;
      }
      request.caller = caller;
      // The rest of the request (the next hooks, the handler, what it starts) runs as this caller.
      runAs([caller], done);
    });
  },
  { name: 'mdp-caller-identity', fastify: '5.x', dependencies: ['mdp-preflight-check'] },
);
