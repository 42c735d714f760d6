/** DDL and conversions of a dataset's table, derived from the catalog. */
import type { Column, Dataset, StructType } from '../catalog/catalog.ts';
import { lit, q, qt } from '../util/sql.ts';

/**
 * SQL types: plain numbers that DuckDB, pandas and polars compute with, and that Parquet carries as they are (INT64,
 * DOUBLE). BigDecimal and raw BigInt amounts are DOUBLE (about 16 significant digits); counts, times and blocks BIGINT.
 * The exact upstream text of each is in `<column>_text`.
 */
const SQL_TYPE: Readonly<Record<Exclude<Column['cls'], 'structs'>, string>> = {
  text: 'VARCHAR',
  ref: 'VARCHAR',
  int: 'INTEGER',
  int8: 'BIGINT',
  bool: 'BOOLEAN',
  bigint: 'BIGINT',
  raw: 'DOUBLE',
  decimal: 'DOUBLE',
  list: 'VARCHAR[]',
};

/** How the column arrives in the NDJSON batch file: numbers as the upstream's text, cast in the INSERT. */
const JSON_TYPE: Readonly<Record<Exclude<Column['cls'], 'structs'>, string>> = {
  text: 'VARCHAR',
  ref: 'VARCHAR',
  int: 'INTEGER',
  int8: 'VARCHAR',
  bool: 'BOOLEAN',
  bigint: 'VARCHAR',
  raw: 'VARCHAR',
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
  return c.cls === 'structs' ? `${structSql(c.struct!)}[]` : SQL_TYPE[c.cls];
}

function jsonType(c: Column): string {
  return c.cls === 'structs' ? sqlType(c) : JSON_TYPE[c.cls];
}

/** Numeric columns also keep the exact upstream text. */
export function hasText(c: Column): boolean {
  return c.cls === 'bigint' || c.cls === 'raw' || c.cls === 'decimal';
}

/** The data columns of a dataset's table with their SQL types (the exporter's own columns follow them). */
export function tableColumns(ds: Dataset): [name: string, type: string][] {
  return ds.columns.flatMap((c): [string, string][] => [
    [c.column, sqlType(c)],
    ...(hasText(c) ? [[`${c.column}_text`, 'VARCHAR'] as [string, string]] : []),
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

/** Target column list and SELECT expressions that convert a batch file's row into a table row. */
export function insertParts(ds: Dataset): { target: string; select: string } {
  const target: string[] = [];
  const select: string[] = [];
  for (const c of ds.columns) {
    const col = q(c.column);
    target.push(col);
    // The mapper has checked every value fits: a cast never fails here, and never gives NULL for a value.
    if (c.cls === 'decimal' || c.cls === 'raw') select.push(`CAST(${col} AS DOUBLE)`);
    else if (c.cls === 'bigint' || c.cls === 'int8') select.push(`CAST(${col} AS BIGINT)`);
    else select.push(col);
    if (hasText(c)) {
      target.push(q(`${c.column}_text`));
      select.push(col);
    }
  }
  return { target: target.join(', '), select: select.join(', ') };
}
