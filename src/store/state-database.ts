// The embedded store: one SQLite file under STATE_DIR holding the budget ledgers and the last good
// values. WAL with synchronous=FULL: a committed reservation survives a kill -9 and a power cut, and
// writes are rare (one per upstream call), so the fsync costs nothing that matters.
// Node's built-in SQLite (node:sqlite) rather than a native addon: nothing to rebuild when Node
// changes, and better-sqlite3 aborted 16 of 20 sandbox starts on Node 24 (measured when it was replaced).
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

export type StateDatabase = DatabaseSync;

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
  at INTEGER NOT NULL,
  account TEXT NOT NULL DEFAULT '',
  weight REAL NOT NULL DEFAULT 1
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
    makeDirectory(stateDir);
    const db = new DatabaseSync(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    // Several processes may share one STATE_DIR: wait for a writer rather than fail.
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec(SCHEMA);
    addColumns(db);
    return db;
  } catch (error) {
    throw new Error(`cannot open the embedded store at ${file} (set STATE_DIR to a writable directory): ${(error as Error).message}`);
  }
}

/** A state.db from before fair shares: its calls are put to no known account (''), weight 1. */
function addColumns(db: StateDatabase): void {
  const columns = new Set((db.prepare('PRAGMA table_info(budget_calls)').all() as { name: string }[]).map((c) => c.name));
  if (!columns.has('account')) db.exec("ALTER TABLE budget_calls ADD COLUMN account TEXT NOT NULL DEFAULT ''");
  if (!columns.has('weight')) db.exec('ALTER TABLE budget_calls ADD COLUMN weight REAL NOT NULL DEFAULT 1');
}

/**
 * `mkdir -p` without `mkdirSync(dir, { recursive: true })`, which spins forever at full CPU where mkdir
 * answers ENOENT under an existing parent (STATE_DIR=/proc/x): each level is tried once, then it fails.
 */
function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(dir).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw error;
    makeDirectory(parent);
    mkdirSync(dir);
  }
}

/** Runs `work` inside one `BEGIN IMMEDIATE` transaction (the write lock is taken before the first read). */
export function immediateTransaction<T>(db: StateDatabase, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    rollback(db);
    throw error;
  }
}

function rollback(db: StateDatabase): void {
  try {
    db.exec('ROLLBACK');
  } catch {
    // SQLite already rolled back on its own (a full disk, an I/O error): the original error is the one to report.
  }
}
