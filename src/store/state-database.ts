// The embedded store: one SQLite file under STATE_DIR holding the budget ledgers and the last good
// values. WAL with synchronous=FULL: a committed reservation survives a kill -9 and a power cut, and
// writes are rare (one per upstream call), so the fsync costs nothing that matters.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export type StateDatabase = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS cache_entries (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  stored_at INTEGER NOT NULL,
  fresh_until INTEGER NOT NULL,
  stale_until INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cache_entries_stale_until ON cache_entries (stale_until);
CREATE TABLE IF NOT EXISTS budget_calls (
  name TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS budget_calls_name_at ON budget_calls (name, at);
CREATE TABLE IF NOT EXISTS budget_backoff (
  name TEXT PRIMARY KEY,
  until INTEGER NOT NULL
);
`;

/** Opens (creating if needed) `<stateDir>/state.db`; a clear error when the directory is unusable. */
export function openStateDatabase(stateDir: string): StateDatabase {
  const file = join(stateDir, 'state.db');
  try {
    mkdirSync(stateDir, { recursive: true });
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // Several processes may share one STATE_DIR: wait for a writer rather than fail.
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    return db;
  } catch (error) {
    throw new Error(`cannot open the embedded store at ${file} (set STATE_DIR to a writable directory): ${(error as Error).message}`);
  }
}
