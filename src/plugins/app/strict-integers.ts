// Integer query parameters are plain decimal digits. Ajv's type coercion (which turns the query's strings
// into the schema's types) also reads "1e2", "0x10", "+14" and "5.0" as integers; the caller's string is
// checked first, once trimmed as every value is (query-values.ts), for every integer property of every
// route's querystring schema, so routes added later are covered without doing anything.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler, RouteOptions } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { rawQueryParam } from './raw-query.js';

const DIGITS = /^[0-9]+$/;

/** Names of the querystring properties declared as integers. @internal */
export function integerParameters(querystring: unknown): string[] {
  const properties = (querystring as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, schema]) => schema.type === 'integer')
    .map(([name]) => name);
}

/** The value as the caller wrote it must be digits only; a repeated parameter is left to validation. */
function checkPlainDigits(request: FastifyRequest, names: readonly string[]): void {
  for (const name of names) {
    const value = rawQueryParam(request, name);
    if (typeof value === 'string' && !DIGITS.test(value)) {
      throw new ApiError('INVALID_PARAMETER', `${name} must be a whole number written in plain decimal digits`);
    }
  }
}

/** Before the routes are added: every route with an integer query parameter checks it before validation. */
export const strictIntegers = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route: RouteOptions) => {
      const names = integerParameters(route.schema?.querystring);
      if (names.length === 0) return;
      const check: preValidationAsyncHookHandler = async function strictIntegers(request) {
        checkPlainDigits(request, names);
      };
      route.preValidation = [check, ...(route.preValidation === undefined ? [] : [route.preValidation].flat())];
    });
  },
  { name: 'mdp-strict-integers', fastify: '5.x' },
);
