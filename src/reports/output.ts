/** Writes a query's result as a table, CSV, JSON, Parquet or an Arrow IPC stream, to stdout or to a file (temp + rename). */
import type { DuckDBConnection, Json } from '@duckdb/node-api';
import { tableFromJSON, tableToIPC } from 'apache-arrow';
import { renameSync, writeFileSync } from 'node:fs';
import { UsageError } from '../config/chains.ts';
import { lit } from '../store/ddl.ts';

/** Output formats of `report` and `query`. */
export const FORMATS = ['table', 'csv', 'json', 'parquet', 'arrow'] as const;
/** One output format. */
export type Format = (typeof FORMATS)[number];

/** Longest cell shown by the table format; CSV, JSON and Parquet are never cut. */
const MAX_CELL = 48;

function csvCell(v: Json): string {
  if (v === null) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function table(columns: string[], rows: Record<string, Json>[]): string {
  const text = (v: Json) => {
    const s = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return s.length > MAX_CELL ? `${s.slice(0, MAX_CELL - 1)}…` : s;
  };
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c] ?? null).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => text(r[c] ?? null)))), `(${rows.length} rows)`].join('\n');
}

/** Runs `sql` and writes its result. Exact numbers (DECIMAL, HUGEINT) are written as strings in JSON and Arrow. */
export async function writeResult(conn: DuckDBConnection, sql: string, format: Format, out: string | undefined): Promise<number> {
  const emit = (data: string | Uint8Array) => {
    if (!out) return void process.stdout.write(data);
    writeFileSync(`${out}.tmp`, data);
    renameSync(`${out}.tmp`, out);
  };
  if (format === 'parquet') {
    if (!out) throw new UsageError('--format parquet needs --out FILE');
    const r = await conn.run(`COPY (${sql}) TO ${lit(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd)`);
    renameSync(`${out}.tmp`, out);
    return r.rowsChanged;
  }
  const reader = await conn.runAndReadAll(sql);
  const columns = reader.columnNames();
  // 64-bit integers (counts, ranks, blocks) come back as strings; they are numbers when JavaScript holds them exactly.
  const ints = reader.columnTypes().map((t) => ['BIGINT', 'UBIGINT'].includes(t.toString()));
  const rows = reader.getRowObjectsJson().map((r) => {
    columns.forEach((c, i) => {
      const v = r[c];
      if (ints[i] && typeof v === 'string' && Number.isSafeInteger(Number(v))) r[c] = Number(v);
    });
    return r;
  });
  if (format === 'json') emit(`${JSON.stringify(rows, null, 1)}\n`);
  else if (format === 'csv') emit(`${[columns.map((c) => csvCell(c)).join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c] ?? null)).join(','))].join('\n')}\n`);
  else if (format === 'arrow') emit(tableToIPC(tableFromJSON(rows.length ? rows : [Object.fromEntries(columns.map((c) => [c, null]))]).slice(0, rows.length), 'stream'));
  else emit(`${table(columns, rows)}\n`);
  return rows.length;
}
