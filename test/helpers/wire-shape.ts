// The shape of a JSON body: every key path with the JSON types found there, recursively, arrays by element
// (`$.chart.result[].meta.currency`). Keys that are data rather than names (dates and date-times, as in a
// time series) collapse to `*`, so two series of different days have one shape. Simulator conformance
// compares the shape of a simulator's answer with the shape of the recorded real answer to the same request.

export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
export type Shape = Map<string, Set<JsonType>>;

/** Keys that are data: `2024-05-10`, `2024-05-10 16:00`, `2024-05-10 16:00:00`. */
const DATA_KEY = /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/;

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonType;
}

export function shapeOf(value: unknown, isDataKey: (key: string, path: string) => boolean = (key) => DATA_KEY.test(key)): Shape {
  const shape: Shape = new Map();
  const visit = (v: unknown, path: string) => {
    let types = shape.get(path);
    if (types === undefined) {
      types = new Set();
      shape.set(path, types);
    }
    types.add(typeOf(v));
    if (Array.isArray(v)) for (const element of v) visit(element, `${path}[]`);
    else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) visit(child, `${path}.${isDataKey(key, path) ? '*' : key}`);
    }
  };
  visit(value, '$');
  return shape;
}

/**
 * Paths whose presence varies in reality (an older capture lacks a key, a quiet session has no bars), each
 * with the types reality may give it there (`null` beside `string` for a currency Yahoo leaves empty).
 * A path ending in `.**` covers everything below it.
 */
export type Tolerances = Record<string, readonly JsonType[]>;

export interface ShapeDifference {
  path: string;
  problem: 'missing in the simulator' | 'not in the recorded answer' | 'other types';
  recorded: JsonType[];
  simulated: JsonType[];
}

/** Where the simulator's answer differs from the recorded one, beyond what `tolerances` allows. */
export function compareShapes(recorded: Shape, simulated: Shape, tolerances: Tolerances = {}): ShapeDifference[] {
  const tolerated = (path: string) => toleranceOf(path, tolerances);
  const differences: ShapeDifference[] = [];
  const list = (types: Set<JsonType> | undefined) => [...(types ?? [])].sort();
  for (const path of new Set([...recorded.keys(), ...simulated.keys()])) {
    const r = recorded.get(path);
    const s = simulated.get(path);
    const allowed = tolerated(path);
    // A path below one that is absent on either side (an empty array, a null object) is judged there.
    if (r === undefined || s === undefined) {
      // Elements of an array or of a map keyed by data may be none: only named keys are required.
      const element = path.endsWith('[]') || path.endsWith('.*');
      if (element || allowed !== undefined || !parentsPresent(path, r === undefined ? recorded : simulated)) continue;
      differences.push({
        path,
        problem: r === undefined ? 'not in the recorded answer' : 'missing in the simulator',
        recorded: list(r),
        simulated: list(s),
      });
      continue;
    }
    const reality = new Set([...r, ...(allowed ?? [])]);
    // Every type the simulator sends must occur in reality there; reality may show more (a null now and then).
    if ([...s].some((t) => !reality.has(t))) differences.push({ path, problem: 'other types', recorded: list(r), simulated: list(s) });
  }
  return differences;
}

function toleranceOf(path: string, tolerances: Tolerances): readonly JsonType[] | undefined {
  if (tolerances[path] !== undefined) return tolerances[path];
  for (const [pattern, types] of Object.entries(tolerances)) {
    if (pattern.endsWith('.**') && path.startsWith(pattern.slice(0, -2))) return types;
  }
  return undefined;
}

/** Whether every parent of `path` is in `shape` as an object or array (so the path's absence means something). */
function parentsPresent(path: string, shape: Shape): boolean {
  const cut = Math.max(path.lastIndexOf('.'), path.endsWith('[]') ? path.length - 2 : -1);
  if (cut <= 0) return true;
  const parent = path.slice(0, cut);
  const types = shape.get(parent);
  return types !== undefined && (types.has('object') || types.has('array'));
}

/** One line per difference, for an assertion message. */
export function describeDifferences(differences: readonly ShapeDifference[]): string {
  return differences
    .map((d) => `${d.path}: ${d.problem} (recorded ${d.recorded.join('|') || '-'}, simulator ${d.simulated.join('|') || '-'})`)
    .join('\n');
}
