// A tool's arguments, read and validated as the REST routes' parameters are: by the one text rule first
// (plugins/app/query-values.ts: spaces trimmed, invisible characters refused by name, a case-insensitive enum
// in its listed spelling), then against its input schema by Ajv (the same schemas where they share a parameter:
// SymbolParam, KeywordsParam, the indicator and interval enums), refused with the same messages, naming the
// argument and what it may be. Scalars an agent sends for a list, and numbers sent as text, are taken as meant
// (Ajv's `coerceTypes: 'array'`). The SDK's own validator is handed the same Ajv instance.
import type { TObject } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ApiError } from '../../core/errors.js';
import { validationToApiError } from '../../plugins/app/error-handler.js';
import { declaredValues } from '../../plugins/app/query-values.js';

export const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false, verbose: true });

interface Reader {
  read: (values: Record<string, unknown>) => void;
  validate: ValidateFunction;
}

const compiled = new WeakMap<TObject, Reader>();

/** The arguments as the tool reads them (defaults filled in), or INVALID_PARAMETER / MISSING_PARAMETER naming the argument. */
export function argumentsOf<T>(schema: TObject, raw: Record<string, unknown> | undefined): T {
  let reader = compiled.get(schema);
  if (reader === undefined) {
    reader = { read: declaredValues(schema.properties as Record<string, Record<string, unknown>>), validate: ajv.compile(schema) };
    compiled.set(schema, reader);
  }
  const args = { ...raw };
  reader.read(args);
  if (reader.validate(args)) return args as T;
  throw argumentError(reader.validate.errors ?? [], schema);
}

/** The REST message, with what the argument may be where that message does not say it. */
function argumentError(errors: ErrorObject[], schema: TObject): ApiError {
  const error = validationToApiError(errors);
  const first = errors[0];
  if (first?.keyword === 'additionalProperties')
    return new ApiError(error.code, `${error.message}; the arguments are ${Object.keys(schema.properties).join(', ')}`);
  const about = (first?.parentSchema as { description?: string } | undefined)?.description;
  if (first === undefined || about === undefined || ['enum', 'required'].includes(first.keyword)) return error;
  return new ApiError(error.code, `${error.message}: ${about}`);
}
