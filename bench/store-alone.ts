/**
 * DuckDB alone storing rows, in a process of its own: the benchmark's yardstick for what keeping the rows in the
 * warehouse costs in memory, whoever fetches them. It opens a new warehouse with the exporter's settings (the memory
 * limit given, or the default one; the checkpoint threshold), inserts NDJSON files of mapped rows with the ceiling's
 * statement, FILES_PER_TRANSACTION of them to a transaction, then checkpoints, and prints one JSON line:
 * `{ rows, startMb, peakMb }`, the resident memory once the warehouse is open and the process's high-water mark.
 *
 *   node --import tsx bench/store-alone.ts DIR MEMORY_LIMIT|default FILES_PER_TRANSACTION FILE.ndjson…
 *
 * The benchmark runs it compiled (dist/bench/store-alone.js), so that the process holds no more than the exporter's.
 */
import { DEFAULTS } from '../src/config/config.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { qt } from '../src/util/sql.ts';
import { ceilingInsert, SWAPS } from './ceiling.ts';

const [dir, limit, per, ...files] = process.argv.slice(2);
const w = await Warehouse.open(dir!, { memoryLimit: limit === 'default' ? DEFAULTS.duckdbMemoryLimit : limit! });
await w.ensureTables([SWAPS]);
const startMb = process.memoryUsage.rss() / 1024 ** 2;
const step = Number(per);
for (let i = 0; i < files.length; i += step) await w.exec(ceilingInsert(files.slice(i, i + step)));
await w.exec('CHECKPOINT');
const rows = Number((await w.all(`SELECT count(*) AS n FROM ${qt(SWAPS.table)}`))[0]!.n);
await w.close();
process.stdout.write(`${JSON.stringify({ rows, startMb, peakMb: process.resourceUsage().maxRSS / 1024 })}\n`);
