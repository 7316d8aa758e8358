// Every query parameter a route declares is read by the one text rule (core/parameter-text.ts) before the
// route's schema validates it, on every route, those added later included, with no copy of the rule in any:
// - surrounding spaces are trimmed, so the schema validates, and the route keys its cache entry on, the one
//   spelling of a request (`symbol=%20IBM` is `IBM`);
// - a value the schema constrains (an enum, a pattern, a number, a boolean) holding a character that has no
//   place in a value is refused here, naming the parameter and the character, where the schema would only
//   say that something is wrong. A free string is left to the route's reader, which refuses it when it reads
//   it: a parameter the function asked for does not take is ignored, as Alpha Vantage ignores it;
// - an enum marked x-case-insensitive is put in its listed spelling (`interval=Daily` is `daily`).
import fp from 'fastify-plugin';
import type { FastifyInstance, preValidationAsyncHookHandler, RouteOptions } from 'fastify';
import { parameterText, trimSpaces } from '../../core/parameter-text.js';

/**
 * Marks an enum matched in any letter case (routes/schemas.ts): generated clients keep the listed values as
 * their type, the description says what else is accepted, and this step puts a value in its listed spelling.
 */
export const CASE_INSENSITIVE = 'x-case-insensitive';

interface Reading {
  /** The schema constrains the value: a refused character is refused here. */
  constrained: boolean;
  /** A case-insensitive enum's listed spellings, by lower case. */
  spellings: ReadonlyMap<string, string> | undefined;
}

function readingOf(schema: Record<string, unknown>): Reading {
  const values = schema.enum;
  const constrained = values !== undefined || schema.pattern !== undefined || (schema.type !== undefined && schema.type !== 'string');
  const spellings =
    schema[CASE_INSENSITIVE] === true && Array.isArray(values)
      ? new Map(values.map((value) => [String(value).toLowerCase(), String(value)]))
      : undefined;
  return { constrained, spellings };
}

function read(name: string, value: unknown, { constrained, spellings }: Reading): unknown {
  if (typeof value !== 'string') return value;
  if (!constrained) return trimSpaces(value);
  const text = parameterText(name, value);
  return spellings?.get(text.toLowerCase()) ?? text;
}

/**
 * A reader of the values `properties` declares: each read in place (a repeated or listed one value by value).
 * A route's query is read so; so are an MCP tool's arguments (routes/mcp/arguments.ts), by the same rule.
 */
export function declaredValues(properties: Record<string, Record<string, unknown>>): (values: Record<string, unknown>) => void {
  const declared = new Map(Object.entries(properties).map(([name, schema]) => [name, readingOf(schema)]));
  return (values) => {
    for (const name of Object.keys(values)) {
      const reading = declared.get(name);
      if (reading === undefined) continue;
      const value = values[name];
      values[name] = Array.isArray(value) ? value.map((each) => read(name, each, reading)) : read(name, value, reading);
    }
  };
}

/**
 * After strict-integers: each adds its step in front of a route's preValidation, so this one runs first, and
 * an integer is checked for plain digits once trimmed, as every other value is read.
 */
export const queryValues = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route: RouteOptions) => {
      const properties = (route.schema?.querystring as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties;
      if (properties === undefined) return;
      const readQuery = declaredValues(properties);
      const step: preValidationAsyncHookHandler = async function queryValues(request) {
        readQuery(request.query as Record<string, unknown>);
      };
      route.preValidation = [step, ...(route.preValidation === undefined ? [] : [route.preValidation].flat())];
    });
  },
  { name: 'mdp-query-values', fastify: '5.x', dependencies: ['mdp-strict-integers'] },
);
