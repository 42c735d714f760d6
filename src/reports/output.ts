/** Writes a query's result as a table, CSV, JSON, Parquet or an Arrow IPC stream, to stdout or to a file (temp + rename). */

import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DuckDBConnection, Json } from '@duckdb/node-api';
import { UsageError } from '../errors.ts';
import { replaceFile, writeFileAtomic } from '../util/atomic-file.ts';
import { cells, fit, humanNumber, humanTime, tableLines } from '../util/display.ts';
import { jsonSafe } from '../util/inert.ts';
import { lit } from '../util/sql.ts';
import { wrap } from '../util/wrap.ts';

/** Output formats of `report` and `query`. */
export const FORMATS = ['table', 'csv', 'json', 'parquet', 'arrow'] as const;
/** One output format. */
export type Format = (typeof FORMATS)[number];

/** Widest cell of the table format, in terminal cells; CSV, JSON, Parquet and Arrow are never cut. */
const MAX_CELL = 44;

/** How the table format is laid out. */
export interface TableOptions {
  /** Columns to show, in this order (default: all, as many as fit). */
  readonly columns?: readonly string[];
  /** Rows to show at most (the count of all rows is still printed). */
  readonly limit?: number;
  /** Terminal cells per line (default: the terminal's width; unlimited when not a terminal). */
  readonly width?: number;
  /** Without `columns`: the columns to show first, the most important first (a report's `display`); the rest follow. */
  readonly display?: readonly string[];
  /** Every column, however wide the table (`--wide`). */
  readonly wide?: boolean;
}

function csvCell(v: Json): string {
  if (v === null) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One value as a table shows it: numbers for reading, text inert and cut to MAX_CELL cells. */
function tableCell(v: Json): string {
  if (v === null) return '';
  if (typeof v === 'number') return humanNumber(v);
  return fit(typeof v === 'object' ? JSON.stringify(v) : String(v), MAX_CELL);
}

/**
 * A table that fits `width` cells: the columns that fit, left to right (a line below names the others and how to see
 * them), numbers right-aligned.
 */
export function renderTable(
  columns: readonly string[],
  rows: readonly Record<string, Json>[],
  opts: TableOptions = {},
): string {
  const shown = opts.limit === undefined ? rows : rows.slice(0, opts.limit);
  const text = shown.map((r) => columns.map((c) => tableCell(r[c] ?? null)));
  const numeric = columns.map(
    (c) => shown.some((r) => typeof r[c] === 'number') && shown.every((r) => r[c] === null || typeof r[c] === 'number'),
  );
  const head = columns.map((c) => fit(c, MAX_CELL));
  const widths = head.map((h, i) => Math.max(cells(h), ...text.map((t) => cells(t[i]!))));
  const limit = opts.width ?? Infinity;
  let keep = 0;
  for (let used = 0; keep < columns.length && used + widths[keep]! <= limit; keep++) used += widths[keep]! + 2;
  keep = Math.max(1, keep);
  const kept = <T>(xs: readonly T[]) => xs.slice(0, keep);
  const out = tableLines(kept(head), text.map(kept), { right: kept(numeric), rule: true });
  const more = shown.length < rows.length ? `, ${shown.length} shown` : '';
  out.push(`(${rows.length} rows${more})`);
  if (keep < columns.length)
    out.push(
      wrap(
        `(${columns.length - keep} more columns: ${columns.slice(keep).join(', ')}; --wide shows them all, --columns chooses, --format csv gives them exactly)`,
        { width: limit, indent: 1 },
      ),
    );
  return out.join('\n');
}

/** The width to fit: the terminal's, or `COLUMNS` when set (as shells and `watch` set it), or none. */
export function terminalWidth(): { width?: number } {
  if (process.stdout.isTTY) return { width: process.stdout.columns };
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? { width: columns } : {};
}

/** Checks where a result goes before anything runs: an existing folder for `--out`, no binary to a terminal. */
export function checkOutput(format: Format, out: string | undefined): void {
  if (out !== undefined) {
    const dir = dirname(resolve(out));
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UsageError(`--out ${out}: the folder ${dir} does not exist; create it, or write somewhere else`);
    return;
  }
  if (format === 'parquet') throw new UsageError('--format parquet needs --out FILE');
  if (format === 'arrow' && process.stdout.isTTY)
    throw new UsageError(
      '--format arrow writes a binary stream: pass --out FILE, or pipe it into a reader (| python …)',
    );
}

/** Where and how a result is written: its format, the file (stdout when absent), and the table's settings. */
export interface ResultOutput {
  readonly format: Format;
  readonly out?: string | undefined;
  readonly table?: TableOptions;
}

/**
 * Runs `sql` and writes its result. CSV, JSON, Parquet and Arrow keep every value exact (64-bit integers that
 * JavaScript cannot hold exactly as strings); the table format is for reading (see `renderTable`).
 */
export async function writeResult(conn: DuckDBConnection, sql: string, to: ResultOutput): Promise<number> {
  const { format, out, table = {} } = to;
  checkOutput(format, out);
  const emit = (data: string | Uint8Array) => {
    if (!out) return void process.stdout.write(data);
    writeFileAtomic(out, data);
  };
  if (format === 'parquet') {
    if (!out) throw new UsageError('--format parquet needs --out FILE');
    const r = await conn.run(`COPY (${sql}) TO ${lit(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd)`);
    replaceFile(`${out}.tmp`, out);
    return r.rowsChanged;
  }
  const reader = await conn.runAndReadAll(sql);
  const all = reader.columnNames();
  const unknown = (table.columns ?? []).filter((c) => !all.includes(c));
  if (unknown.length)
    throw new UsageError(
      `--columns names ${unknown.join(', ')}, which the result does not have; its columns: ${all.join(', ')}`,
    );
  const first = table.columns?.length ? table.columns : (table.display ?? []).filter((c) => all.includes(c));
  const columns =
    format !== 'table'
      ? all
      : table.columns?.length
        ? [...first]
        : [...first, ...all.filter((c) => !first.includes(c))];
  // 64-bit integers (counts, ranks, blocks) come back as strings; they are numbers when JavaScript holds them exactly.
  const types = reader.columnTypes().map((t) => t.toString());
  const ints = types.map((t) => ['BIGINT', 'UBIGINT'].includes(t));
  // Times are shown in one format everywhere people read them (`2026-01-01 00:00:00Z`); exact formats keep DuckDB's.
  const times = types.map((t) => format === 'table' && t.startsWith('TIMESTAMP'));
  const rows = reader.getRowObjectsJson().map((r) => {
    all.forEach((c, i) => {
      const v = r[c];
      if (ints[i] && typeof v === 'string' && Number.isSafeInteger(Number(v))) r[c] = Number(v);
      if (times[i] && typeof v === 'string') r[c] = humanTime(v);
    });
    return r;
  });
  if (format === 'json') emit(`${jsonSafe(JSON.stringify(rows, null, 1))}\n`);
  else if (format === 'csv')
    emit(
      `${[columns.map((c) => csvCell(c)).join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c] ?? null)).join(','))].join('\n')}\n`,
    );
  else if (format === 'arrow') {
    // Loaded when needed: apache-arrow takes a third of a second to load.
    const { tableFromJSON, tableToIPC } = await import('apache-arrow');
    emit(
      tableToIPC(
        tableFromJSON(rows.length ? rows : [Object.fromEntries(columns.map((c) => [c, null]))]).slice(0, rows.length),
        'stream',
      ),
    );
  } else
    emit(
      `${renderTable(columns, rows, { ...table, ...(table.width === undefined && !out && !table.wide ? terminalWidth() : {}) })}\n`,
    );
  return rows.length;
}
