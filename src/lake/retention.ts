/**
 * Retention of what grows with every run rather than with the chain: the snapshot tables (the liquidity list and the
 * snapshot entities, taken whole by each run) and the history of mutable entities (the rows each run read).
 * `lake.keepSnapshotMonths` N keeps the N most recent calendar months (UTC, the current one included). After each lake
 * write, older months go:
 * 1. the snapshot rows from the warehouse, so that no later rewrite of the lake brings them back;
 * 2. their month folders from the lake (a history's months are the lake's alone).
 * A bucket lake's publish then deletes their objects and names them in no manifest. Both steps can be repeated, so a
 * run killed between them is finished by the next one. Events, buckets and the state of mutable entities are never
 * deleted: they are the record, and a backfill alone could bring them back.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import type { Sql } from '../store/sql-port.ts';
import { qt } from '../util/sql.ts';
import { hasHistory, type TablePart, tableDir } from './layout.ts';

/** The table path of a dataset that retention trims, or null for the ones it never touches. */
export function retainedPart(ds: Dataset): TablePart | null {
  if (ds.kind === 'snapshot' || ds.kind === 'list') return 'data';
  return hasHistory(ds) ? 'history' : null;
}

/** The first month kept (`YYYY-MM`, UTC) when `keep` months are kept at `now`. */
export function firstKeptMonth(now: Date, keep: number): string {
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (keep - 1), 1));
  return `${first.getUTCFullYear()}-${String(first.getUTCMonth() + 1).padStart(2, '0')}`;
}

export interface RetentionStats {
  /** The first month kept. */
  readonly from: string;
  /** Snapshot rows deleted from the warehouse. */
  readonly rows: number;
  /** Month folders deleted from the lake. */
  readonly months: number;
}

/** Deletes the snapshot rows and lake months older than the `keep` most recent months (see the header). */
export async function applyRetention(
  w: Sql,
  lake: string,
  opts: { readonly keep: number; readonly now?: Date },
): Promise<RetentionStats> {
  const from = firstKeptMonth(opts.now ?? new Date(), opts.keep);
  const cutoff = `${from}-01 00:00:00+00`;
  let rows = 0;
  let months = 0;
  const tables = new Set(
    (await w.all(`SELECT schema_name || '.' || table_name AS t FROM duckdb_tables()`)).map((r) => String(r.t)),
  );
  for (const ds of DATASETS) {
    const part = retainedPart(ds);
    if (!part) continue;
    if (part === 'data' && tables.has(ds.table))
      rows += await w.exec(`DELETE FROM ${qt(ds.table)} WHERE "_taken_at" < CAST($1 AS TIMESTAMPTZ)`, [cutoff]);
    const dir = tableDir(lake, ds, part);
    if (!existsSync(dir)) continue;
    for (const chain of readdirSync(dir).filter((n) => n.startsWith('chain=')))
      for (const month of readdirSync(join(dir, chain)).filter((n) => n.startsWith('month='))) {
        if (month.slice('month='.length) >= from) continue;
        rmSync(join(dir, chain, month), { recursive: true, force: true });
        months++;
      }
  }
  return { from, rows, months };
}
