// The shape of src/: no run-time import cycle, and folders that depend in one direction, lowest layer
// first. The graph is esbuild's (a bundler's view, as Node loads the code): type-only imports vanish
// there, as they do at run time, so they neither order loading nor form a cycle. The architecture page's
// "Layers" section (docs/explanation/architecture.md) draws the same layers; it is checked to name every folder,
// in this order.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { build, type Metafile } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/**
 * Lowest first. A module may import from its own folder and from earlier layers; folders in one layer do
 * not import each other. The composition root (src/deps.ts and its parts in src/deps/, the `deps` layer)
 * builds everything below it and nothing of the HTTP edge beside it (plugins) or above it (routes), which
 * receive what it builds and name only its types; at run time only the entry points import it. The entry
 * points (app.ts, server.ts) sit above them all, and nothing of a layer imports them.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['log', 'process', 'wire', 'health'],
  ['indicators', 'store'],
  ['budget', 'cache'],
  ['broker'],
  ['upstreams', 'sandbox'],
  ['services'],
  ['stream'],
  ['deps', 'plugins'],
  ['routes'],
];
/** The composition root's layer: src/deps.ts, and src/deps/ where it builds each area. */
const COMPOSITION_ROOT = 'deps';
/** A route declares its schema and hands the request to a service: one longer is doing a service's work. */
const MAX_ROUTE_LINES = 160;
/** Simulators see the wire format and the maths, never an adapter: shared assumptions would prove nothing. */
const SANDBOX_MAY_USE = new Set(['core', 'wire', 'indicators', 'sandbox']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Run-time imports between modules of src/, as `src/a/b.ts -> src/c/d.ts`; `kinds` keeps only those kinds. */
async function importGraph(kinds: readonly string[] = ['import-statement', 'dynamic-import']): Promise<Map<string, string[]>> {
  const result = await build({
    entryPoints: sources(SRC),
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: join(ROOT, '.architecture-check'),
    logLevel: 'silent',
  });
  const graph = new Map<string, string[]>();
  for (const [file, input] of Object.entries((result.metafile as Metafile).inputs)) {
    if (!file.startsWith('src/')) continue;
    graph.set(
      file,
      input.imports.filter((i) => i.path.startsWith('src/') && kinds.includes(i.kind)).map((i) => i.path),
    );
  }
  return graph;
}

/** The folder (layer) of a module of src/; undefined for an entry point. */
function folderOf(file: string): string | undefined {
  if (file === `src/${COMPOSITION_ROOT}.ts`) return COMPOSITION_ROOT;
  const parts = relative('src', file).split('/');
  return parts.length > 1 ? parts[0] : undefined;
}

function layerOf(folder: string): number {
  const index = LAYERS.findIndex((layer) => layer.includes(folder));
  if (index < 0)
    throw new Error(
      `src/${folder}/ is in no layer: add it to LAYERS (test/architecture.test.ts) and to the layers of docs/explanation/architecture.md`,
    );
  return index;
}

/** Every cycle, as the modules of each strongly connected component (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, order.get(next) as number));
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return found;
}

test('live mode loads no simulator: from the entry point, src/sandbox/ is reached only by a dynamic import', async () => {
  const graph = await importGraph(['import-statement']);
  const loaded = new Set<string>();
  const visit = (file: string) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
  };
  // server.ts loads app.ts dynamically in every mode (so that a failing native module is explained), the sandbox in sandbox mode only.
  visit('src/server.ts');
  visit('src/app.ts');
  assert.ok(loaded.size > 100, `the static graph from src/server.ts and src/app.ts holds ${loaded.size} modules`);
  assert.deepEqual(
    [...loaded].filter((file) => file.startsWith('src/sandbox/')),
    [],
  );
});

test('no run-time import cycle in src/', async () => {
  assert.deepEqual(cycles(await importGraph()), []);
});

/** Every run-time import that climbs a layer or crosses one, into an entry point or the composition root, or from a simulator into an adapter. */
function wrongWay(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, imports] of graph) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const target of imports) {
      const to = folderOf(target);
      if (to === from) continue;
      if (to === undefined) wrong.push(`${file} -> ${target} (an entry point)`);
      else if (layerOf(to) >= layerOf(from)) wrong.push(`${file} -> ${target} (${to} is not below ${from})`);
      else if (to === COMPOSITION_ROOT) wrong.push(`${file} -> ${target} (the composition root: the entry points alone build from it)`);
      else if (from === 'sandbox' && !SANDBOX_MAY_USE.has(to)) wrong.push(`${file} -> ${target} (a simulator reads an adapter's code)`);
    }
  }
  return wrong;
}

test("folders import only from their own layer's folder and lower layers, the composition root included; simulators only the wire format", async () => {
  assert.deepEqual(wrongWay(await importGraph()), []);
});

test("simulators do not even name an adapter's types: what they share with it is src/wire/", () => {
  const named = sources(join(SRC, 'sandbox')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)]
      .map((m) => folderOf(relative(ROOT, join(file, '..', m[1] as string))))
      .filter((folder) => folder !== undefined && !SANDBOX_MAY_USE.has(folder))
      .map((folder) => `${relative(ROOT, file)} names src/${folder}/`),
  );
  assert.deepEqual(named, []);
});

test('the check sees a cycle and a wrong-way import when there is one', () => {
  const graph = new Map([
    ['src/core/a.ts', ['src/routes/b.ts']],
    ['src/routes/b.ts', ['src/core/a.ts']],
  ]);
  assert.deepEqual(cycles(graph), [['src/core/a.ts', 'src/routes/b.ts']]);
  assert.deepEqual(wrongWay(graph), ['src/core/a.ts -> src/routes/b.ts (routes is not below core)']);
});

test('the check sees an import that climbs from or into the composition root, and lets the entry points build from it', () => {
  const graph = new Map([
    ['src/deps.ts', ['src/plugins/app/upstream-call-metrics.ts', 'src/deps/broker.ts', 'src/services/quote-service.ts']],
    ['src/deps/broker.ts', ['src/routes/stream.ts', 'src/stream/topic-relay.ts', 'src/upstreams/ibkr/ibkr-broker.ts']],
    ['src/plugins/app/metrics.ts', ['src/deps.ts', 'src/core/errors.ts']],
    ['src/routes/stream.ts', ['src/deps/streams.ts', 'src/plugins/app/send-cached.ts', 'src/stream/stream-hub.ts']],
    ['src/services/quote-service.ts', ['src/app.ts']],
    ['src/sandbox/cli.ts', ['src/broker/numbers.ts']],
    ['src/app.ts', ['src/deps.ts', 'src/deps/streams.ts', 'src/plugins/app/metrics.ts', 'src/routes/stream.ts']],
    ['src/server.ts', ['src/app.ts']],
  ]);
  assert.deepEqual(wrongWay(graph), [
    'src/deps.ts -> src/plugins/app/upstream-call-metrics.ts (plugins is not below deps)',
    'src/deps/broker.ts -> src/routes/stream.ts (routes is not below deps)',
    'src/plugins/app/metrics.ts -> src/deps.ts (deps is not below plugins)',
    'src/routes/stream.ts -> src/deps/streams.ts (the composition root: the entry points alone build from it)',
    'src/services/quote-service.ts -> src/app.ts (an entry point)',
    "src/sandbox/cli.ts -> src/broker/numbers.ts (a simulator reads an adapter's code)",
  ]);
});

test(`no file of src/routes/ runs over ${MAX_ROUTE_LINES} lines`, () => {
  const long = sources(join(SRC, 'routes'))
    .map((file) => {
      const text = readFileSync(file, 'utf8');
      return { file: relative(ROOT, file), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
    })
    .filter(({ lines }) => lines > MAX_ROUTE_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  assert.deepEqual(long, []);
});

test("the architecture page's layers name every folder of src/, layer by layer in this order", () => {
  const page = readFileSync(join(ROOT, 'docs', 'explanation', 'architecture.md'), 'utf8');
  const start = page.indexOf('## Layers');
  assert.ok(start >= 0, 'docs/explanation/architecture.md has a "## Layers" section');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
  for (const folder of folders) layerOf(folder);
  const named = [...section.matchAll(/\bsrc\/([a-z-]+)\//g)].map((m) => m[1] as string).filter((f) => folders.includes(f));
  const firstMention = [...new Set(named)];
  assert.deepEqual([...firstMention].sort(), [...folders].sort(), 'every folder named');
  const layers = firstMention.map(layerOf);
  assert.deepEqual(
    layers,
    [...layers].sort((a, b) => a - b),
    'named lowest layer first',
  );
});
