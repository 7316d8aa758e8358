// The OpenAPI document is generated from the route schemas; these tests hold it to the spec and validate
// real responses from every documented GET path against it, so the document cannot drift from the code.
// New routes are covered without editing this file: it iterates over the document's own paths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startApp, type TestResponse } from '../helpers/app.js';
import { validatorFor } from '../helpers/contract.js';

const SPEC_PATHS = [
  '/api/provider-a/quote',
  '/api/provider-a/technical',
  '/api/provider-b/dividends',
  '/api/market/overview',
  '/api/broker/health',
  '/api/broker/accounts',
  '/api/broker/positions',
  '/api/broker/quotes',
  '/api/system/status',
  '/api/system/live',
  '/api/system/ready',
];

/** Values used when a parameter carries no example of its own. */
const FALLBACK_EXAMPLES: Record<string, string> = { symbol: 'IBM', symbols: 'IBM,AAPL' };

/** Optional parameters a path needs for its example call to succeed (/query's function needs a symbol). */
const EXAMPLE_EXTRAS: Record<string, Record<string, string>> = { '/api/provider-a/query': { symbol: 'IBM' } };

/** /metrics answers on the public port only to the bearer of METRICS_TOKEN. */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const EXAMPLE_HEADERS: Record<string, Record<string, string>> = { '/metrics': { authorization: `Bearer ${METRICS_TOKEN}` } };

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema?: { enum?: unknown[]; default?: unknown; examples?: unknown[]; type?: string };
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  summary?: string;
  tags?: string[];
  parameters?: Parameter[];
  responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, { $ref: string }> }>;
}
interface Document {
  openapi: string;
  servers?: { url: string }[];
  info: { version: string; title: string; license?: { name: string; identifier?: string; url?: string } };
  paths: Record<string, { get?: Operation }>;
  components: {
    schemas: Record<string, unknown>;
    headers: Record<string, unknown>;
    securitySchemes?: Record<string, { type: string; scheme?: string }>;
  };
}

function exampleFor(p: Parameter): string | undefined {
  const value = p.example ?? p.schema?.examples?.[0] ?? FALLBACK_EXAMPLES[p.name] ?? p.schema?.default ?? p.schema?.enum?.[0];
  return value === undefined ? undefined : String(value);
}

function checkAgainstDocument(check: ReturnType<typeof validatorFor>, op: Operation, label: string, res: TestResponse): void {
  const documented = op.responses[String(res.status)];
  assert.ok(
    documented,
    `${label}: status ${res.status} is not documented (${Object.keys(op.responses).join(', ')}); body ${res.text.slice(0, 300)}`,
  );
  if (documented.content?.['text/plain'] !== undefined) {
    // /metrics: the Prometheus text format, which no JSON schema describes.
    assert.match(String(res.headers['content-type']), /^text\/plain/, label);
    return;
  }
  const content = documented.content?.['application/json'];
  assert.ok(content, `${label}: ${res.status} has no application/json schema`);
  assert.match(String(res.headers['content-type']), /^application\/json/, label);
  const problems = check(content.schema, res.body);
  assert.equal(problems, null, `${label}: body does not match the document:\n${problems}\n${res.text.slice(0, 500)}`);
}

test('the document is OpenAPI 3.1, version 1.0.0, with every endpoint, parameter and error of the spec', async (t) => {
  const { get } = await startApp(t);
  const res = await get('/api/openapi.json');
  assert.equal(res.status, 200);
  const doc = res.body as Document;
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0.0');
  assert.ok(doc.components.schemas.ErrorResponse, 'ErrorResponse is a component');

  const missing = SPEC_PATHS.filter((p) => doc.paths[p]?.get === undefined);
  assert.deepEqual(missing, [], 'every endpoint of the spec is documented');
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get;
    if (op === undefined) continue;
    assert.ok(op.summary && op.tags?.length, `${path}: summary and tags`);
    // The one streaming route (/api/stream) documents its 200 as an event stream, /metrics as Prometheus text.
    const ok = op.responses['200']?.content;
    assert.ok(
      ok?.['application/json']?.schema ?? ok?.['text/event-stream']?.schema ?? ok?.['text/plain']?.schema,
      `${path}: a 200 JSON (or event-stream, or text) schema`,
    );
    for (const p of op.parameters ?? []) assert.ok(p.schema, `${path}: parameter ${p.name} has a schema`);
    if ((op.parameters ?? []).some((p) => p.required)) {
      const bad = op.responses['400']?.content?.['application/json']?.schema as { $ref?: string } | undefined;
      assert.equal(bad?.$ref, '#/components/schemas/ErrorResponse', `${path}: 400 is the shared error body`);
    }
    // Allowed values are listed plainly, not as a union of one-value schemas (a value-or-list union, as
    // /query's repeatable RANGE, is not a list of values).
    for (const p of op.parameters ?? [])
      assert.ok(!/"anyOf":\[\{[^\]]*"const"/.test(JSON.stringify(p.schema)), `${path}: ${p.name} lists its values as an enum`);
  }
  const technical = doc.paths['/api/provider-a/technical']?.get?.parameters ?? [];
  const indicator = technical.find((p) => p.name === 'indicator');
  assert.ok(indicator?.schema?.enum?.includes('RSI'), 'indicator lists its allowed values');
  assert.equal(indicator?.required, false, 'a parameter with a default is optional');
});

test('real responses from every documented GET path validate against the document', async (t) => {
  // Provider A's simulator refuses more than one call per second, as the real one does. 1100 ms, not the
  // 1000 ms default: calls paced exactly 1 s apart can arrive closer than that (reported to the lead).
  const { get } = await startApp(t, { env: { ALPHA_VANTAGE_MIN_INTERVAL_MS: '1100', METRICS_TOKEN } });
  const doc = (await get('/api/openapi.json')).body as Document;
  const check = validatorFor(doc);
  let exercised = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get;
    // A stream never ends: test/routes/stream.test.ts reads it.
    if (op === undefined || op.responses['200']?.content?.['text/event-stream'] !== undefined) continue;
    const params = op.parameters ?? [];
    assert.ok(
      params.every((p) => p.in === 'query'),
      `${path}: only query parameters are expected`,
    );
    const query = new URLSearchParams(EXAMPLE_EXTRAS[path]);
    for (const p of params) {
      const value = p.required ? exampleFor(p) : undefined;
      assert.ok(!p.required || value !== undefined, `${path}: no example for required ${p.name}`);
      if (value !== undefined) query.set(p.name, value);
    }
    const url = query.size > 0 ? `${path}?${query}` : path;
    const res = await get(url, EXAMPLE_HEADERS[path]);
    checkAgainstDocument(check, op, `GET ${url}`, res);
    assert.ok(
      res.status < 400 || path === '/api/system/ready',
      `GET ${url} should succeed in the sandbox, got ${res.status}: ${res.text.slice(0, 300)}`,
    );
    exercised += 1;

    // The documented error for a missing required parameter, too.
    const required = params.filter((p) => p.required);
    if (required.length > 0) checkAgainstDocument(check, op, `GET ${path} (no parameters)`, await get(path));
    // And an invalid value for each enum parameter.
    for (const p of params.filter((p) => p.schema?.enum)) {
      const wrong = new URLSearchParams(query);
      wrong.set(p.name, 'NOT-A-VALUE');
      const invalid = await get(`${path}?${wrong}`);
      assert.equal(invalid.status, 400, `${path}: ${p.name}=NOT-A-VALUE is refused`);
      checkAgainstDocument(check, op, `GET ${path}?${wrong}`, invalid);
    }
  }
  assert.ok(exercised >= SPEC_PATHS.length, `exercised ${exercised} paths`);
});

test('security is declared: an optional client key on market data, none on the system routes, an optional bearer on broker data, a bearer on /metrics', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body as Document;
  assert.deepEqual(doc.components.securitySchemes?.brokerToken, {
    type: 'http',
    scheme: 'bearer',
    description: (doc.components.securitySchemes?.brokerToken as { description?: string } | undefined)?.description,
  });
  assert.equal(doc.components.securitySchemes?.metricsToken?.scheme, 'bearer');
  assert.equal(doc.components.securitySchemes?.clientKey?.scheme, 'bearer');
  const securityOf = (path: string) => doc.paths[path]?.get?.security;
  for (const path of ['/api/provider-a/quote', '/api/market/overview', '/api/provider-b/dividends'])
    assert.deepEqual(securityOf(path), [{}, { clientKey: [] }], `${path}: an optional client key`);
  for (const path of ['/api/broker/health', '/api/system/status']) assert.deepEqual(securityOf(path), [], `${path}: no credential`);
  for (const path of ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes', '/api/broker/stream-ticket'])
    assert.deepEqual(securityOf(path), [{}, { brokerToken: [] }], `${path}: an optional bearer token`);
  assert.deepEqual(securityOf('/api/stream'), [{}, { clientKey: [] }, { brokerToken: [] }], '/api/stream: either, optionally');
  assert.deepEqual(securityOf('/metrics'), [{ metricsToken: [] }]);
  assert.deepEqual((doc.paths['/mcp'] as Record<string, Operation>).post?.security, [{}, { mcpToken: [] }], '/mcp: MCP_TOKEN, when set');
  // Every operation says: a route added without a rule would be flagged by the linters too.
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item as Record<string, Operation>))
      assert.ok(Array.isArray(op.security), `${method.toUpperCase()} ${path}: security declared`);
  assert.ok(doc.info.license?.name && (doc.info.license.identifier || doc.info.license.url), 'info.license, with an identifier');
});

test('/metrics on the public port is documented, and answers the bearer of METRICS_TOKEN only', async (t) => {
  const { get } = await startApp(t, { env: { METRICS_TOKEN, METRICS_PORT: 'off' } });
  assert.equal((await get('/metrics')).status, 404);
  const res = await get('/metrics', EXAMPLE_HEADERS['/metrics']);
  assert.equal(res.status, 200);
  assert.match(res.text, /^mdp_http_requests_total/m);
});

test('unknown paths and wrong methods answer with the documented error body', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body as Document;
  const check = validatorFor(doc);
  const errorSchema = { $ref: '#/components/schemas/ErrorResponse' };
  const notFound = await get('/api/no-such-route');
  assert.equal(notFound.status, 404);
  assert.equal(check(errorSchema, notFound.body), null);
  const wrongMethod = await get('/api/system/status', {}, 'POST');
  assert.equal(wrongMethod.status, 405);
  assert.equal(check(errorSchema, wrongMethod.body), null);
});

test('browsable docs are served at /api/docs with their assets, no network needed', async (t) => {
  const { get } = await startApp(t);
  const page = await get('/api/docs');
  // @fastify/swagger-ui may redirect /api/docs to /api/docs/ depending on version.
  const html = page.status === 302 ? await get('/api/docs/') : page;
  assert.equal(html.status, 200);
  assert.match(html.text, /swagger-ui/i);
  assert.ok(
    !/https?:\/\/(?!127\.0\.0\.1)[a-z]/i.test(html.text.replace(/<!--[\s\S]*?-->/g, '').replace(/xmlns(:\w+)?="[^"]*"/g, '')),
    'no external URL',
  );
  const assets = [...html.text.matchAll(/(?:href|src)="\.?\/?([^"]+\.(?:css|js))"/g)].map((m) => m[1]!);
  assert.ok(assets.length > 0);
  for (const asset of assets) {
    const url = asset.startsWith('/') ? asset : `/api/docs/${asset.replace(/^api\/docs\//, '')}`;
    assert.equal((await get(url)).status, 200, url);
  }
  const json = await get('/api/docs/json');
  assert.equal(json.status, 200);
  assert.equal(json.body.info.version, '1.0.0');
});

test('every operation has a unique operationId (routes added later too), and the document names its server', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body as Document;
  const ids: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      assert.match(
        String(op.operationId),
        /^[a-z][A-Za-z0-9]+$/,
        `${method.toUpperCase()} ${path} has no operationId (add one to its route schema)`,
      );
      ids.push(op.operationId!);
    }
  }
  assert.equal(new Set(ids).size, ids.length, `operationIds are unique: ${ids.join(', ')}`);
  assert.deepEqual(doc.servers, [{ url: '/', description: 'This service' }]);
});

test('cached routes document 304 and the cache headers; every response its X-Request-Id; 429 its Retry-After', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body as Document;
  for (const name of [
    'X-Cache',
    'Age',
    'ETag',
    'Cache-Control',
    'Retry-After',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-Data-Mode',
    'X-Request-Id',
  ]) {
    assert.ok(doc.components.headers[name], `${name} is a header component`);
  }
  const quote = doc.paths['/api/provider-a/quote']!.get!;
  for (const status of ['200', '304']) {
    assert.deepEqual(
      Object.keys(quote.responses[status]!.headers ?? {})
        .filter((h) => ['X-Cache', 'Age', 'ETag', 'Cache-Control'].includes(h))
        .sort(),
      ['Age', 'Cache-Control', 'ETag', 'X-Cache'],
    );
  }
  assert.equal(quote.responses['304']!.content, undefined, '304 has no body');
  assert.ok(quote.responses['429']!.headers?.['Retry-After']);
  assert.ok(quote.responses['200']!.headers?.['X-RateLimit-Remaining']);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item as Record<string, Operation>)) {
      for (const [status, response] of Object.entries(op.responses))
        assert.ok(response.headers?.['X-Request-Id'], `${path} ${status}: X-Request-Id`);
    }
  }
  const indicator = doc.paths['/api/provider-a/technical']!.get!.parameters!.find((p) => p.name === 'indicator')!;
  assert.equal((indicator.schema as Record<string, unknown>)['x-case-insensitive'], true, 'case-insensitive enums say so');
});

test('two independent OpenAPI validators accept the document', async (t) => {
  const { get } = await startApp(t);
  const doc = (await get('/api/openapi.json')).body as Document;
  // swagger-parser dereferences in place: give it a copy.
  await SwaggerParser.validate(structuredClone(doc) as never);
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as never);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  assert.equal(validator.version, '3.1');
});
