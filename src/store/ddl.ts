/** DDL and conversions of a dataset's table, derived from the catalog. */
import type { Column, Dataset } from '../catalog/catalog.ts';

/** Quotes an identifier. */
export function q(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A schema-qualified table name, quoted. */
export function qt(table: string): string {
  return table.split('.').map(q).join('.');
}

/** A string literal. */
export function lit(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

const SQL_TYPE: Readonly<Record<Column['cls'], string>> = {
  text: 'VARCHAR', ref: 'VARCHAR', int: 'INTEGER', int8: 'BIGINT', bool: 'BOOLEAN', bigint: 'HUGEINT', decimal: 'DECIMAL(38,18)', list: 'VARCHAR[]',
};

/** How the column arrives in the NDJSON batch file. */
const JSON_TYPE: Readonly<Record<Column['cls'], string>> = {
  text: 'VARCHAR', ref: 'VARCHAR', int: 'INTEGER', int8: 'VARCHAR', bool: 'BOOLEAN', bigint: 'VARCHAR', decimal: 'VARCHAR', list: 'VARCHAR[]',
};

/** Numeric columns also keep the exact upstream text. */
export function hasText(c: Column): boolean {
  return c.cls === 'bigint' || c.cls === 'decimal';
}

/** CREATE TABLE for a dataset. */
export function createTable(ds: Dataset): string {
  const cols = ds.columns.flatMap((c) => [`${q(c.column)} ${SQL_TYPE[c.cls]}`, ...(hasText(c) ? [`${q(`${c.column}_text`)} VARCHAR`] : [])]);
  cols.push('"chain_id" INTEGER NOT NULL', '"_block" BIGINT', '"_run_id" VARCHAR', '"_taken_at" TIMESTAMPTZ');
  return `CREATE TABLE IF NOT EXISTS ${qt(ds.table)} (\n  ${cols.join(',\n  ')}\n)`;
}

/** `columns={…}` for read_json of a batch file. */
export function jsonColumns(ds: Dataset): string {
  return `{${ds.columns.map((c) => `${lit(c.column)}: ${lit(JSON_TYPE[c.cls])}`).join(', ')}}`;
}

/** Target column list and SELECT expressions that convert a batch file's row into a table row. */
export function insertParts(ds: Dataset): { target: string; select: string } {
  const target: string[] = [];
  const select: string[] = [];
  for (const c of ds.columns) {
    const col = q(c.column);
    target.push(col);
    if (c.cls === 'decimal') select.push(`pe_dec(${col})`);
    else if (c.cls === 'bigint') select.push(`TRY_CAST(${col} AS HUGEINT)`);
    else if (c.cls === 'int8') select.push(`CAST(${col} AS BIGINT)`);
    else select.push(col);
    if (hasText(c)) {
      target.push(q(`${c.column}_text`));
      select.push(col);
    }
  }
  return { target: target.join(', '), select: select.join(', ') };
}
