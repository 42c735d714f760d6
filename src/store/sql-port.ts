/**
 * What runs statements on the warehouse, as the modules below it see it: no tie to how the warehouse is opened
 * (`warehouse.ts`), which readies its tables with them (`tables.ts`).
 */
import type { DuckDBValue, Json } from '@duckdb/node-api';

/** Parameters of a statement. */
export type Params = DuckDBValue[] | Record<string, DuckDBValue>;

/** What runs statements: the warehouse's own connection, or one of its lanes. */
export interface Sql {
  exec(sql: string, params?: Params): Promise<number>;
  all(sql: string, params?: Params): Promise<Record<string, Json>[]>;
}

/** What readying tables needs of the warehouse: statements, one transaction at a time, and its file's path. */
export interface TableStore extends Sql {
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  readonly path: string;
}

/** An open transaction, as a batch uses it. */
export interface Tx {
  exec(sql: string, params?: (string | number | null)[]): Promise<number>;
  all(sql: string, params?: (string | number | null)[]): Promise<Record<string, unknown>[]>;
}
