// `npm run record`: refreshes the recorded corpus (test/fixtures/recorded/) from the real providers.
// A developer's tool, run by hand with real keys and network, never in CI. The plan is in
// scripts/record/plan.ts; `npm run record -- --dry-run` prints it, `--help` the options.
import { record } from './record/run.js';

try {
  const { exitCode } = await record(process.argv.slice(2));
  process.exitCode = exitCode;
} catch (error) {
  // Expected problems are reported by record() itself; this is a bug, said in one line unless asked for more.
  process.stderr.write(`npm run record failed: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.env.RECORD_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
  else process.stderr.write('(set RECORD_DEBUG=1 to see where)\n');
  process.exitCode = 1;
}
