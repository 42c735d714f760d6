/**
 * The ceiling's statement, shared by the benchmark and `bench/store-alone.ts`: DuckDB's own `read_json` of NDJSON files
 * of mapped rows into the swaps table, with the exporter's casts (`insertParts`) and its own columns filled as a run
 * fills them.
 */
import { findDataset } from '../src/catalog/catalog.ts';
import { insertParts, jsonColumns } from '../src/store/ddl.ts';
import { lit, qt } from '../src/util/sql.ts';

export const SWAPS = findDataset('dodoex.swaps')!;
/** The chain the benchmark's sandbox serves. */
export const CHAIN = 56;

/** `INSERT … SELECT … FROM read_json(files)` into the swaps table. */
export function ceilingInsert(files: readonly string[]): string {
  const { target, select } = insertParts(SWAPS);
  const paths = files.length === 1 ? lit(files[0]!) : `[${files.map((f) => lit(f)).join(', ')}]`;
  return `INSERT INTO ${qt(SWAPS.table)} (${target}, chain_id, _block, _run_id, _taken_at) SELECT ${select}, ${CHAIN}, 0, 'bench', NULL FROM read_json(${paths}, format = 'newline_delimited', columns = ${jsonColumns(SWAPS)})`;
}
