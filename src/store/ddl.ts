/** DDL and conversions of a dataset's table, derived from the catalog. */
import type { Column, Dataset, StructType } from '../catalog/catalog.ts';
import { isRefList, MICROS, textColumn } from '../catalog/column.ts';
import { lit, q, qt } from '../util/sql.ts';

/**
 * SQL types: plain numbers that DuckDB, pandas and polars compute with, and that Parquet carries as they are (INT64,
 * DOUBLE, DECIMAL). BigDecimal and DODO's raw BigInt amounts are DOUBLE (about 16 significant digits); DODO's counts,
 * times and blocks BIGINT; a BigInt of any other subgraph DECIMAL(38,0), exact, NULL beyond 38 digits. The exact
 * upstream text of each is in `<column>_text`.
 */
const SQL_TYPE: Readonly<Record<Exclude<Column['cls'], 'structs'>, string>> = {
  text: 'VARCHAR',
  ref: 'VARCHAR',
  int: 'INTEGER',
  int8: 'BIGINT',
  timestamp: 'TIMESTAMPTZ',
  bool: 'BOOLEAN',
  bigint: 'BIGINT',
  raw: 'DOUBLE',
  integer: 'DECIMAL(38,0)',
  decimal: 'DOUBLE',
  list: 'VARCHAR[]',
};

/** How the column arrives in the NDJSON batch file: numbers as the upstream's text, cast in the INSERT. */
const JSON_TYPE: Readonly<Record<Exclude<Column['cls'], 'structs'>, string>> = {
  text: 'VARCHAR',
  ref: 'VARCHAR',
  int: 'INTEGER',
  int8: 'VARCHAR',
  timestamp: 'VARCHAR',
  bool: 'BOOLEAN',
  bigint: 'VARCHAR',
  raw: 'VARCHAR',
  integer: 'VARCHAR',
  decimal: 'VARCHAR',
  list: 'VARCHAR[]',
};

/** The SQL type of one struct shape: `STRUCT("a" VARCHAR, "b" STRUCT(…))`. */
function structSql(t: StructType): string {
  return `STRUCT(${Object.entries(t)
    .map(([k, v]) => `${q(k)} ${v === 'text' ? 'VARCHAR' : v === 'bool' ? 'BOOLEAN' : structSql(v)}`)
    .join(', ')})`;
}

/** The SQL type of a column (the batch file carries the same for `structs`). */
export function sqlType(c: Column): string {
  if (c.cls === 'list' && c.elem) return `${SQL_TYPE[c.elem]}[]`;
  return c.cls === 'structs' ? `${structSql(c.struct!)}[]` : SQL_TYPE[c.cls];
}

/** The SQL type of a dataset's `id` (VARCHAR, but BIGINT for a subgraph's `Int8` ids). */
export function idSqlType(ds: Dataset): string {
  const id = ds.columns.find((c) => c.field === 'id');
  return id ? sqlType(id) : 'VARCHAR';
}

function jsonType(c: Column): string {
  if (c.cls === 'list' && c.elem) return `${JSON_TYPE[c.elem]}[]`;
  return c.cls === 'structs' ? sqlType(c) : JSON_TYPE[c.cls];
}

const NUMERIC_TEXT = new Set<Column['cls']>(['bigint', 'raw', 'integer', 'decimal']);

/** Numeric columns, and lists of numbers sent as text (BigInt, BigDecimal), also keep the exact upstream text. */
export function hasText(c: Column): boolean {
  return NUMERIC_TEXT.has(c.cls) || (c.cls === 'list' && c.elem !== undefined && NUMERIC_TEXT.has(c.elem));
}

/** The SQL type of a column's exact text: text, or a list of texts for a list. */
export function textType(c: Column): string {
  return c.cls === 'list' ? 'VARCHAR[]' : 'VARCHAR';
}

/** The data columns of a dataset's table with their SQL types (the exporter's own columns follow them). */
export function tableColumns(ds: Dataset): [name: string, type: string][] {
  return ds.columns.flatMap((c): [string, string][] => [
    [c.column, sqlType(c)],
    ...(hasText(c) ? [[textColumn(c), textType(c)] as [string, string]] : []),
  ]);
}

/** CREATE TABLE for a dataset. */
export function createTable(ds: Dataset): string {
  const cols = tableColumns(ds).map(([name, type]) => `${q(name)} ${type}`);
  cols.push('"chain_id" INTEGER NOT NULL', '"_block" BIGINT', '"_run_id" VARCHAR', '"_taken_at" TIMESTAMPTZ');
  return `CREATE TABLE IF NOT EXISTS ${qt(ds.table)} (\n  ${cols.join(',\n  ')}\n)`;
}

/** `columns={…}` for read_json of a batch file. */
export function jsonColumns(ds: Dataset): string {
  return `{${ds.columns.map((c) => `${lit(c.column)}: ${lit(jsonType(c))}`).join(', ')}}`;
}

/**
 * Where a batch file holds a row: `rows`, NDJSON of mapped rows named as the table's columns; `pages`, JSON arrays of
 * upstream entities as the page checker kept them, named as upstream.
 */
export type BatchFormat = 'rows' | 'pages';

/** A column's value in a batch file's row: a mapped column, or an upstream field (references read by their id). */
function fileValue(c: Column, format: BatchFormat): string {
  if (format === 'rows') return q(c.column);
  const f = q(c.field);
  if (c.cls === 'ref') return `${f}."id"`;
  return c.cls === 'list' && isRefList(c) ? `list_transform(${f}, x -> x."id")` : f;
}

/**
 * A column's typed value from the upstream's value as a batch file carries it (`v`: its text, for numbers). The mapper
 * (or the page checker, which checks as it does) has checked every value fits: a cast never fails here, and never gives
 * NULL for a value, but for a subgraph's BigInt beyond 38 digits (`integer`), NULL by rule.
 */
export function typedFrom(c: Column, v: string): string {
  if (c.cls === 'decimal' || c.cls === 'raw') return `CAST(${v} AS DOUBLE)`;
  if (c.cls === 'integer' || (c.cls === 'list' && c.elem === 'integer')) return `TRY_CAST(${v} AS ${sqlType(c)})`;
  if (c.cls === 'bigint' || c.cls === 'int8') return `CAST(${v} AS BIGINT)`;
  // graph-node's Timestamp counts microseconds; an Int or BigInt made a time, seconds or milliseconds.
  if (c.cls === 'timestamp')
    return c.unit
      ? `make_timestamptz(CAST(${v} AS BIGINT) * ${MICROS[c.unit]})`
      : `make_timestamptz(CAST(${v} AS BIGINT))`;
  if (c.cls === 'list' && c.elem) return `CAST(${v} AS ${sqlType(c)})`;
  return v;
}

/** Target column list and SELECT expressions that convert a batch file's row into a table row. */
export function insertParts(
  ds: Dataset,
  format: BatchFormat = 'rows',
): { target: string; select: string; columns: string[]; values: string[] } {
  const target: string[] = [];
  const select: string[] = [];
  for (const c of ds.columns) {
    const v = fileValue(c, format);
    target.push(q(c.column));
    select.push(typedFrom(c, v));
    if (hasText(c)) {
      target.push(q(textColumn(c)));
      select.push(v);
    }
  }
  return { target: target.join(', '), select: select.join(', '), columns: target, values: select };
}

/**
 * How a field arrives in a page as the upstream sent it (an array of entities, read with `format = 'array'`): numbers as
 * their text, references as `{ id }` objects.
 */
function pageType(c: Column): string {
  if (c.cls === 'ref') return 'STRUCT("id" VARCHAR)';
  if (c.cls === 'list') return isRefList(c) ? 'STRUCT("id" VARCHAR)[]' : jsonType(c);
  return jsonType(c);
}

/** `columns={…}` for read_json of kept pages: the entity's fields, named as upstream. */
export function pageColumns(ds: Dataset): string {
  return `{${ds.columns.map((c) => `${lit(c.field)}: ${lit(pageType(c))}`).join(', ')}}`;
}
