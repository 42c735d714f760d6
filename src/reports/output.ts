/** Writes a query's result as a table, CSV, JSON, Parquet or an Arrow IPC stream, to stdout or to a file (temp + rename). */

import { once } from 'node:events';
import { closeSync, existsSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type DuckDBConnection, type DuckDBDataChunk, type Json, JsonDuckDBValueConverter } from '@duckdb/node-api';
import { UsageError } from '../errors.ts';
import { replaceFile } from '../util/atomic-file.ts';
import { humanTime, terminalWidth } from '../util/display.ts';
import { inert, jsonSafe } from '../util/inert.ts';
import { lit, subquery } from '../util/sql.ts';
import { rowLimit, TableDraft, type TableOptions } from './table-format.ts';
import { untorn } from './torn-read.ts';

/** Output formats of `report` and `query`. */
export const FORMATS = ['table', 'csv', 'json', 'parquet', 'arrow'] as const;
/** One output format. */
export type Format = (typeof FORMATS)[number];

/** One CSV cell; `shown` (a terminal): control characters as visible escapes, so that a value cannot drive it. */
function csvCell(v: Json, shown = false): string {
  if (v === null) return '';
  const raw = typeof v === 'object' ? JSON.stringify(v) : String(v);
  const s = shown ? inert(raw) : raw;
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
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

/** Text is handed to the sink in pieces of about this many characters: few writes, and no string near V8's limit. */
const PIECE = 1 << 20;

/** Where a result's bytes go: stdout as they come, or a temporary file that becomes `out` only once it is whole. */
interface ResultSink {
  write(data: string | Uint8Array): Promise<void>;
  /** The result is whole: the file takes its name. */
  done(): void;
  /** The result failed: the temporary file is removed, and a file `out` that was there is left as it was. */
  abort(): void;
}

function resultSink(out: string | undefined): ResultSink {
  if (!out)
    return {
      // A pipe that is slow to read holds the writer back instead of filling the memory.
      write: async (data) => {
        if (!process.stdout.write(data)) await once(process.stdout, 'drain');
      },
      done: () => {},
      abort: () => {},
    };
  const tmp = `${out}.tmp`;
  const fd = openSync(tmp, 'w');
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    write: async (data) => {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    },
    done: () => {
      close();
      replaceFile(tmp, out);
    },
    abort: () => {
      close();
      rmSync(tmp, { force: true });
    },
  };
}

/** Gathers text and hands it to the sink a piece at a time. */
class Pieces {
  #text = '';
  constructor(private readonly sink: ResultSink) {}
  async add(text: string): Promise<void> {
    this.#text += text;
    if (this.#text.length >= PIECE) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.#text) await this.sink.write(this.#text);
    this.#text = '';
  }
}

/** DuckDB's integer types that come back as text; a value is a number when JavaScript holds it exactly. */
const WIDE_INTEGERS = new Set(['BIGINT', 'UBIGINT', 'HUGEINT', 'UHUGEINT']);

/** A query's result read a chunk (2,048 rows) at a time, each row's values in the order of `names`. */
interface ResultRows {
  /** The result's column names, made unique as DuckDB's row objects make them (`a`, `a_1`). */
  readonly names: readonly string[];
  /** The rows of each chunk in turn. */
  chunks(): AsyncGenerator<Json[][]>;
  /** Reads the chunks not read yet, for their count alone. */
  countRest(): Promise<number>;
}

/**
 * The result of `sql`, as DuckDB streams it: a result of any length costs the memory of a few chunks. Its first chunk
 * is read before any row is written, asked again while that read is torn (`untorn`): a sorted or aggregated result
 * has read every file by then. A plain scan of several files may read the later ones after its first chunk, where a
 * torn read fails the query, as DuckDB's own.
 */
async function resultRows(conn: DuckDBConnection, sql: string, format: Format): Promise<ResultRows> {
  const { result, first } = await untorn(async () => {
    const result = await conn.stream(sql);
    return { result, first: await result.fetchChunk() };
  });
  // The chunks in turn, the first one read already, for whichever of `chunks` and `countRest` reads on.
  let head: DuckDBDataChunk | null | undefined = first;
  const next = async () => {
    if (head === undefined) return result.fetchChunk();
    const c = head;
    head = undefined;
    return c;
  };
  const rest = async function* () {
    for (let c = await next(); c && c.rowCount > 0; c = await next()) yield c;
  };
  const types = result.columnTypes().map((t) => t.toString());
  // 64-bit integers (counts, ranks, blocks) come back as strings; they are numbers when JavaScript holds them exactly.
  const ints = types.map((t) => WIDE_INTEGERS.has(t));
  // Times are shown in one format everywhere people read them (`2026-01-01 00:00:00Z`); exact formats keep DuckDB's.
  const times = types.map((t) => format === 'table' && t.startsWith('TIMESTAMP'));
  const fixed = types.map((_, i) => ints[i] || times[i]);
  return {
    names: result.deduplicatedColumnNames(),
    async *chunks() {
      for await (const chunk of rest()) {
        const rows = chunk.convertRows(JsonDuckDBValueConverter) as Json[][];
        for (const r of rows)
          for (let i = 0; i < r.length; i++) {
            const v = r[i];
            if (!fixed[i] || typeof v !== 'string') continue;
            if (ints[i] && Number.isSafeInteger(Number(v))) r[i] = Number(v);
            else if (times[i]) r[i] = humanTime(v);
          }
        yield rows;
      }
    },
    async countRest() {
      let n = 0;
      for await (const chunk of rest()) {
        // A chunk's memory is DuckDB's, freed when the chunk is collected; a chunk only counted makes no garbage to
        // prompt a collection (6,000,000 rows counted so held 0.8 GB). Converting one column makes enough.
        chunk.convertColumnValues(0, JsonDuckDBValueConverter);
        n += chunk.rowCount;
      }
      return n;
    },
  };
}

/** Each row as an object keyed by `names`, as JSON and Arrow take them. */
function rowObject(names: readonly string[], r: readonly Json[]): Record<string, Json> {
  const o: Record<string, Json> = {};
  for (let i = 0; i < names.length; i++) o[names[i]!] = r[i] ?? null;
  return o;
}

/**
 * CSV: a header line, then a line a row; every column, every value exact, byte for byte, to a file or a pipe. To a
 * terminal (`shown`), control characters are visible escapes instead.
 */
async function writeCsv(rows: ResultRows, out: Pieces, shown: boolean): Promise<number> {
  let n = 0;
  const cell = (v: Json) => csvCell(v, shown);
  await out.add(`${rows.names.map(cell).join(',')}\n`);
  for await (const chunk of rows.chunks()) {
    let text = '';
    for (const r of chunk) text += `${r.map(cell).join(',')}\n`;
    await out.add(text);
    n += chunk.length;
  }
  return n;
}

/**
 * JSON: an array of row objects, laid out as `JSON.stringify(rows, null, 1)` lays it out, written a chunk at a time so
 * that no result is too long for one string.
 */
async function writeJson(rows: ResultRows, out: Pieces): Promise<number> {
  let n = 0;
  await out.add('[');
  for await (const chunk of rows.chunks()) {
    let text = '';
    for (const r of chunk)
      text += `${n++ ? ',' : ''}\n ${JSON.stringify(rowObject(rows.names, r), null, 1).replaceAll('\n', '\n ')}`;
    await out.add(jsonSafe(text));
  }
  await out.add(n ? '\n]\n' : ']\n');
  return n;
}

/** The table: every row up to the limit drawn, the rest counted. */
async function writeTable(args: {
  readonly rows: ResultRows;
  readonly columns: readonly string[];
  readonly opts: TableOptions & { readonly width?: number | undefined };
  readonly out: Pieces;
}): Promise<number> {
  const { rows, columns, opts, out } = args;
  const at = columns.map((c) => rows.names.indexOf(c));
  const { limit, capped } = rowLimit(opts, columns.length);
  const draft = new TableDraft(columns, limit);
  for await (const chunk of rows.chunks()) {
    for (const r of chunk) draft.add(r, at);
    if (draft.full) break;
  }
  if (draft.full) draft.skip(await rows.countRest());
  for (const line of draft.lines({ width: opts.width, capped })) await out.add(`${line}\n`);
  return draft.total;
}

/**
 * Runs `sql` and writes its result, a chunk of rows at a time: CSV and JSON stream in constant memory, whatever the
 * length, and keep every value exact (64-bit integers that JavaScript cannot hold exactly as strings); the table format
 * is for reading (see `TableDraft`). Into a file, the result appears whole or not at all.
 */
export async function writeResult(conn: DuckDBConnection, sql: string, to: ResultOutput): Promise<number> {
  const { format, out, table = {} } = to;
  checkOutput(format, out);
  if (format === 'parquet') {
    if (!out) throw new UsageError('--format parquet needs --out FILE');
    // Written whole to its temporary file before it replaces `out`: a torn read is asked again from the start.
    const r = await untorn(() =>
      conn.run(`COPY ${subquery(sql)} TO ${lit(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd)`),
    );
    replaceFile(`${out}.tmp`, out);
    return r.rowsChanged;
  }
  const rows = await resultRows(conn, sql, format);
  const all = rows.names;
  const unknown = (table.columns ?? []).filter((c) => !all.includes(c));
  if (unknown.length)
    throw new UsageError(
      `--columns names ${unknown.join(', ')}, which the result does not have; its columns: ${all.join(', ')}`,
    );
  const first = table.columns?.length ? table.columns : (table.display ?? []).filter((c) => all.includes(c));
  const columns = table.columns?.length ? [...first] : [...first, ...all.filter((c) => !first.includes(c))];
  const sink = resultSink(out);
  try {
    const pieces = new Pieces(sink);
    let n: number;
    if (format === 'json') n = await writeJson(rows, pieces);
    else if (format === 'csv') n = await writeCsv(rows, pieces, !out && process.stdout.isTTY === true);
    else if (format === 'arrow') n = await writeArrow(rows, sink);
    else {
      const width = table.width === undefined && !out && !table.wide ? terminalWidth().width : table.width;
      n = await writeTable({ rows, columns, opts: { ...table, width }, out: pieces });
    }
    await pieces.flush();
    sink.done();
    return n;
  } catch (e) {
    sink.abort();
    throw e;
  }
}

/** Arrow: one IPC stream of every row (apache-arrow builds it whole). */
async function writeArrow(rows: ResultRows, sink: ResultSink): Promise<number> {
  // Loaded when needed: apache-arrow takes a third of a second to load.
  const { tableFromJSON, tableToIPC } = await import('apache-arrow');
  const objects: Record<string, Json>[] = [];
  for await (const chunk of rows.chunks()) for (const r of chunk) objects.push(rowObject(rows.names, r));
  const empty = [Object.fromEntries(rows.names.map((c) => [c, null]))];
  await sink.write(tableToIPC(tableFromJSON(objects.length ? objects : empty).slice(0, objects.length), 'stream'));
  return objects.length;
}
