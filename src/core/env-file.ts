// `.env` in the working directory, read once at start (.env.example says "copy to .env"). Variables
// already in the environment win, so a process manager or container can override any line of it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/** Copies the file's variables into `env` where `env` has none; returns the file read, if any. */
export function loadEnvFile(dir = process.cwd(), env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = join(dir, '.env');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) env[name] ??= value;
  return file;
}
