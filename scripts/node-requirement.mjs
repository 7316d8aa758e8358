// The oldest Node.js the service runs on, checked first by `npm start`. Without it an old Node fails deep in
// the start with "No such built-in module: node:sqlite", which does not say what to do. This file and
// start.mjs use only syntax that old Node versions parse (no top-level await), so the check itself runs
// there. The minimum is package.json's "engines" (test/node-requirement.test.ts keeps them equal): 22.13
// is the first release with node:sqlite unflagged.
export const MINIMUM_NODE = '22.13.0';

function parts(version) {
  return String(version)
    .replace(/^v/, '')
    .split(/[.-]/)
    .slice(0, 3)
    .map((part) => parseInt(part, 10) || 0);
}

/** True when `version` (e.g. "v20.20.2" or "22.13.0") is at least `minimum`. */
export function nodeSatisfies(version, minimum) {
  const found = parts(version);
  const needed = parts(minimum);
  for (let i = 0; i < 3; i += 1) {
    if ((found[i] || 0) !== (needed[i] || 0)) return (found[i] || 0) > (needed[i] || 0);
  }
  return true;
}

/** The one line to print when `version` is too old, else undefined. */
export function nodeVersionProblem(version, minimum = MINIMUM_NODE) {
  if (nodeSatisfies(version, minimum)) return undefined;
  const shown = minimum.replace(/\.0$/, '');
  return `failed to start: this service needs Node.js ${shown} or later (it uses the built-in node:sqlite); found Node.js ${version}`;
}

export function exitIfNodeTooOld() {
  const problem = nodeVersionProblem(process.version);
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
