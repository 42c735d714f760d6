/**
 * The table format of `report` and `query`: a result drawn for reading, every column as wide as its widest cell, numbers
 * for people and text inert. Its rows are held until the last is read, within a number of cells fitted to the host.
 */
import type { Json } from '@duckdb/node-api';
import { cgroupMemoryLimit } from '../config/memory-limit.ts';
import { cells, fit, humanNumber, ruleLine, tableLine } from '../util/display.ts';
import { wrap } from '../util/wrap.ts';

/** Widest cell of the table format, in terminal cells; CSV, JSON, Parquet and Arrow are never cut. */
const MAX_CELL = 44;

/**
 * Cells the table format holds at most (rows times columns) where no control group limits the memory. Its columns are
 * as wide as their widest cell, so each row shown is held, as the text of its cells, until the last row is read: about
 * 25 bytes a cell (300,000 rows of 17 columns, 5.1 million cells, cost 120 MB more than the same as CSV). Past them the
 * table counts the rest and says so; CSV and JSON stream every row in constant memory.
 */
export const TABLE_CELLS = 6_000_000;

/** Bytes a held cell may take, with room for the garbage of drawing it. */
const CELL_BYTES = 64;

/** The share of a control group's memory limit that the cells of a table may take. */
const TABLE_SHARE = 0.2;

/**
 * The cells a table holds at most on this host: TABLE_CELLS, and under a control group's memory limit no more than
 * TABLE_SHARE of it takes (1.7 million cells, 100,000 rows of 17 columns, in a 512 MiB container).
 */
export function tableCells(limit = cgroupMemoryLimit()): number {
  return limit === undefined ? TABLE_CELLS : Math.min(TABLE_CELLS, Math.floor((limit * TABLE_SHARE) / CELL_BYTES));
}

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
  /** Cells the table holds at most (default: `tableCells()`, by the host's memory). */
  readonly cells?: number;
}

/** One value as a table shows it: numbers for reading, text inert and cut to MAX_CELL cells. */
function tableCell(v: Json): string {
  if (v === null) return '';
  if (typeof v === 'number') return humanNumber(v);
  return fit(typeof v === 'object' ? JSON.stringify(v) : String(v), MAX_CELL);
}

/** Between the cells of a row held by a table: shown text never holds it (`inert` escapes every control character). */
const SEP = '\u0000';

/**
 * A table being drawn: the cells of each row shown, as they read, the widest of each column so far, and which columns
 * hold numbers alone (those are right-aligned); rows past `limit` are only counted. The columns are as wide as their
 * widest cell, so nothing is drawn before the last row is in; until then each row is held as one string.
 */
export class TableDraft {
  readonly #rows: string[] = [];
  readonly #widths: number[];
  /** Per column: a number was seen. */
  readonly #numbers: boolean[];
  /** Per column: a value that is neither null nor a number was seen. */
  readonly #other: boolean[];
  #total = 0;

  constructor(
    private readonly columns: readonly string[],
    private readonly limit: number,
  ) {
    this.#widths = columns.map(() => 0);
    this.#numbers = columns.map(() => false);
    this.#other = columns.map(() => false);
  }

  /** Whether a row added now would be shown. */
  get full(): boolean {
    return this.#rows.length >= this.limit;
  }

  /** Adds a row, shown if the table is not full: the value of column `i` is `values[at[i]]`. */
  add(values: readonly Json[], at: readonly number[]): void {
    this.#total++;
    if (this.full) return;
    const row = new Array<string>(at.length);
    for (let i = 0; i < at.length; i++) {
      const v = values[at[i]!] ?? null;
      if (typeof v === 'number') this.#numbers[i] = true;
      else if (v !== null) this.#other[i] = true;
      const text = tableCell(v);
      this.#widths[i] = Math.max(this.#widths[i]!, cells(text));
      row[i] = text;
    }
    this.#rows.push(row.join(SEP));
  }

  /** Counts `n` rows that are not shown. */
  skip(n: number): void {
    this.#total += n;
  }

  /** Rows added and skipped. */
  get total(): number {
    return this.#total;
  }

  /**
   * The table's lines, fitting `width` cells: the columns that fit, left to right (a line below names the others and
   * how to see them), numbers right-aligned; then the count of rows, and how many were shown when not all.
   */
  *lines(opts: { readonly width?: number | undefined; readonly capped: number | undefined }): Generator<string> {
    const { columns } = this;
    const head = columns.map((c) => fit(c, MAX_CELL));
    const widths = head.map((h, i) => Math.max(cells(h), this.#widths[i]!));
    const limit = opts.width ?? Number.POSITIVE_INFINITY;
    let keep = 0;
    for (let used = 0; keep < columns.length && used + widths[keep]! <= limit; keep++) used += widths[keep]! + 2;
    keep = Math.max(1, keep);
    const kept = widths.slice(0, keep);
    const right = this.#numbers.map((n, i) => n && !this.#other[i]).slice(0, keep);
    yield tableLine(head, kept, right);
    yield ruleLine(kept);
    for (const row of this.#rows) yield tableLine(row.split(SEP), kept, right);
    const shown = this.#rows.length;
    const more =
      shown === this.#total
        ? ''
        : opts.capped !== undefined
          ? `, ${shown} shown: a table holds at most ${opts.capped} cells here; --format csv or json writes every row`
          : `, ${shown} shown`;
    yield `(${this.#total} rows${more})`;
    if (keep < columns.length)
      yield wrap(
        `(${columns.length - keep} more columns: ${columns.slice(keep).join(', ')}; --wide shows them all, --columns chooses, --format csv gives them exactly)`,
        { width: limit, indent: 1 },
      );
  }
}

/** The rows a table of `columns` columns shows at most: `--limit` when given, and never more than its cells hold. */
export function rowLimit(opts: TableOptions, columns: number): { limit: number; capped: number | undefined } {
  const asked = opts.limit ?? Number.POSITIVE_INFINITY;
  const cells = opts.cells ?? tableCells();
  const most = Math.max(1, Math.floor(cells / Math.max(1, columns)));
  return { limit: Math.min(asked, most), capped: asked > most ? cells : undefined };
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
  const { limit, capped } = rowLimit(opts, columns.length);
  const draft = new TableDraft(columns, limit);
  const at = columns.map((_, i) => i);
  for (const r of rows)
    draft.add(
      columns.map((c) => r[c] ?? null),
      at,
    );
  return [...draft.lines({ width: opts.width, capped })].join('\n');
}
