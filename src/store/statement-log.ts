/**
 * A log of every statement a DuckDB connection runs, with its time: a developer's view of where a run's seconds go
 * (`POOL_EXPORT_SQL_LOG=<file>`, docs/development.md). Off unless set; a line per statement, tab-separated: the
 * connection (`main`, `lane1`, …), the milliseconds since the process started when it began, its duration in
 * milliseconds, and the statement's text on one line (its first 200,000 characters). Parameters are never written
 * (a key could be among them).
 */
import { appendFileSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';

const FILE = process.env.POOL_EXPORT_SQL_LOG;

/** `conn`, its `run` and `runAndReadAll` timed into the statement log when it is on; else `conn` itself. */
export function logged(conn: DuckDBConnection, name: string): DuckDBConnection {
  if (!FILE) return conn;
  const file = FILE;
  // `runAndReadAll` calls `run` itself: only the outer call is timed.
  let depth = 0;
  for (const method of ['run', 'runAndReadAll'] as const) {
    const inner = conn[method].bind(conn) as (...a: unknown[]) => Promise<unknown>;
    (conn as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      if (depth) return inner(...args);
      const t = performance.now();
      depth++;
      try {
        return await inner(...args);
      } finally {
        depth--;
        const sql = String(args[0]).replace(/\s+/g, ' ').trim().slice(0, 200_000);
        appendFileSync(file, `${name}\t${t.toFixed(0)}\t${(performance.now() - t).toFixed(1)}\t${sql}\n`);
      }
    };
  }
  return conn;
}

/** A line in the statement log marking a step of the program (`what`), with no statement: where the time between goes. */
export function mark(what: string): void {
  if (FILE) appendFileSync(FILE, `step\t${performance.now().toFixed(0)}\t0\t${what}\n`);
}
