/** Quoting for SQL text: the only way a name or a value is written into a statement that cannot take a parameter. */

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

/** A SQL list of string literals (`['a', 'b']`), as DuckDB's file functions take a list of paths. */
export function listLit(xs: readonly string[]): string {
  return `[${xs.map(lit).join(', ')}]`;
}

/**
 * One SELECT statement as the body of a subquery, `(…)` around it: its trailing semicolons dropped, and each parenthesis
 * on a line of its own, so that a `--` comment on its last line ends before the closing one.
 */
export function subquery(select: string): string {
  return `(\n${select.replace(/[\s;]+$/, '')}\n)`;
}
