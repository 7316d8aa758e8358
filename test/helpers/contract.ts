// Holds every answer a test receives to the OpenAPI document the service publishes: for a documented GET or
// HEAD operation, the status must be documented, the JSON body must match its schema, and the documented
// headers must be present (when required) and match theirs. Answers from the hot path are checked like any
// other, since the check runs on what arrived at the client.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestResponse } from './app.js';

interface Header {
  required?: boolean;
  schema: { type?: string };
}
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, { $ref: string }> }>;
}
export interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers?: Record<string, Header> };
}

const DOC_ID = 'https://market-data-proxy.local/openapi.json';

// ajv-formats is CommonJS; its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

/** Compiles schemas with `#/components/...` refs resolved against the document itself. */
export function validatorFor(doc: { components: Record<string, unknown> }): (schema: unknown, value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: doc.components });
  const rebase = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rebase);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v)]),
    );
  };
  const compiled = new Map<string, ReturnType<Ajv2020['compile']>>();
  return (schema, value) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = ajv.compile(rebase(schema) as object);
      compiled.set(key, validate);
    }
    return validate(value) ? null : ajv.errorsText(validate.errors, { separator: '\n' });
  };
}

/** A header value as its schema reads it: digits are numbers for integer headers. */
function headerValue(raw: string, schema: { type?: string }): unknown {
  return schema.type === 'integer' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

export class Contract {
  private readonly check: ReturnType<typeof validatorFor>;

  constructor(private readonly doc: Document) {
    this.check = validatorFor(doc);
  }

  /** Problems with this answer, or [] when it is what the document says (or the path is not documented). */
  problems(method: string, url: string, res: TestResponse): string[] {
    const path = url.split('?')[0] ?? url;
    const operation = this.doc.paths[path]?.[method === 'HEAD' ? 'get' : method.toLowerCase()];
    if (operation === undefined || (method !== 'GET' && method !== 'HEAD')) return [];
    const documented = operation.responses[String(res.status)];
    if (documented === undefined) return [`status ${res.status} is not documented (${Object.keys(operation.responses).join(', ')})`];
    const found: string[] = [];
    for (const [name, { $ref }] of Object.entries(documented.headers ?? {})) {
      const header = this.doc.components.headers?.[$ref.split('/').pop() ?? ''];
      if (header === undefined) {
        found.push(`header ${name}: ${$ref} is not a component`);
        continue;
      }
      const raw = res.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (header.required) found.push(`header ${name} is required but missing`);
        continue;
      }
      const problem = this.check(header.schema, headerValue(String(raw), header.schema));
      if (problem !== null) found.push(`header ${name}: ${JSON.stringify(raw)}: ${problem}`);
    }
    const content = documented.content ?? {};
    if (method === 'HEAD' || Object.keys(content).length === 0) return found;
    // The content type sent must be one the response documents (JSON, or text/csv where /query offers it).
    const sent = String(res.headers['content-type']);
    const type = Object.keys(content).find((documentedType) => sent.startsWith(documentedType));
    if (type === undefined) return [...found, `content type ${sent}`];
    const problem = this.check((content[type] as { schema: unknown }).schema, type === 'application/json' ? res.body : res.text);
    return problem === null ? found : [...found, `body: ${problem}`];
  }

  assert(method: string, url: string, res: TestResponse): void {
    const problems = this.problems(method, url, res);
    if (problems.length > 0) {
      throw new Error(
        `${method} ${url} -> ${res.status} does not match the OpenAPI document:\n  ${problems.join('\n  ')}\n${res.text.slice(0, 300)}`,
      );
    }
  }
}
