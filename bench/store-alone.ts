/**
 * DuckDB alone storing rows, in a process of its own: the benchmark's yardstick for what keeping the rows in the
 * warehouse costs in memory, whoever fetches them. It opens a new warehouse with the exporter's settings (its default
 * memory limit unless MEMORY_LIMIT is given, its checkpoint threshold), inserts NDJSON files of mapped rows into the dataset's table with the
 * exporter's casts (`insertParts`), `files` of them per transaction, then checkpoints, and prints one JSON line:
 * `{ rows, startMb, peakMb }`, the resident memory once the warehouse is open and the process's high-water mark.
 *
 *   node --import tsx bench/store-alone.ts DIR MEMORY_LIMIT|default FILES_PER_TRANSACTION FILE.ndjson…
 *
 * The benchmark runs it compiled (dist/bench/store-alone.js), so that the process holds no more than the exporter's.
 */
import { findDataset } from '../src/catalog/catalog.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { insertParts, jsonColumns } from '../src/store/ddl.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { lit, qt } from '../src/util/sql.ts';

const [dir, limit, per, ...files] = process.argv.slice(2);
const ds = findDataset('dodoex.swaps')!;
const w = await Warehouse.open(dir!, { memoryLimit: limit === 'default' ? DEFAULTS.duckdbMemoryLimit : limit! });
await w.ensureTables([ds]);
const startMb = process.memoryUsage.rss() / 1024 ** 2;
const { target, select } = insertParts(ds);
const step = Number(per);
for (let i = 0; i < files.length; i += step) {
  const paths = `[${files
    .slice(i, i + step)
    .map((f) => lit(f))
    .join(', ')}]`;
  await w.exec(
    `INSERT INTO ${qt(ds.table)} (${target}, chain_id, _block, _run_id, _taken_at) SELECT ${select}, 56, 0, 'bench', NULL FROM read_json(${paths}, format = 'newline_delimited', columns = ${jsonColumns(ds)})`,
  );
}
await w.exec('CHECKPOINT');
const rows = Number((await w.all(`SELECT count(*) AS n FROM ${qt(ds.table)}`))[0]!.n);
await w.close();
process.stdout.write(`${JSON.stringify({ rows, startMb, peakMb: process.resourceUsage().maxRSS / 1024 })}\n`);
