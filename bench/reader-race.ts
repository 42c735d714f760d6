/**
 * What a DuckDB reader meets when it reads a Parquet file while another process replaces it under its name (a rename
 * over it, as the lake publishes a rewritten file). Two DuckDB connections read one path in a loop while a writer
 * rewrites it 300 times (each time a new file renamed over the old); prints the reads that ended well and the errors,
 * by message, for zstd and for snappy. DuckDB opens the file more than once within one query (its footer when the
 * query is planned, its row groups when it runs), so a read that spans a rename can fail: the rows it returns are
 * never the point.
 *
 *   npx tsx bench/reader-race.ts
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const dir = mkdtempSync(join(tmpdir(), 'pe-reader-race-'));
try {
  for (const compression of ['zstd', 'snappy']) {
    const at = join(dir, compression);
    mkdirSync(at);
    const file = join(at, 'part-00001.parquet');
    const writer = await (await DuckDBInstance.create(':memory:')).connect();
    const readers = await DuckDBInstance.create(':memory:');
    const write = (to: string, rows: number, seed: number) =>
      writer.run(
        `COPY (SELECT range AS x, md5(range::VARCHAR || '${seed}') AS s FROM range(${rows})) TO '${to}' (FORMAT parquet, COMPRESSION ${compression})`,
      );
    await write(file, 1, 0);
    let writing = true;
    let reads = 0;
    // Each read that ends well: its count and greatest value, which must be one written file's.
    const answers: string[] = [];
    const written = new Set<string>([
      `1|${(await writer.runAndReadAll("SELECT md5('0' || '0') AS m")).getRowObjects()[0]!.m}`,
    ]);
    const errors = new Map<string, number>();
    const read = async () => {
      const c = await readers.connect();
      while (writing)
        try {
          const [r] = (
            await c.runAndReadAll(`SELECT count(*) AS n, max(s) AS m FROM read_parquet('${file}')`)
          ).getRowObjects();
          answers.push(`${r!.n}|${r!.m}`);
          reads++;
        } catch (e) {
          // One line per kind: the file's name and byte counts left out, control characters shown as escapes.
          const what = String(e)
            .replace(/"[^"]*"/g, '"…"')
            .replace(/read \d+ bytes.*/, 'read … bytes')
            .replace(/[\u0000-\u001f\u007f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`)
            .slice(0, 90);
          errors.set(what, (errors.get(what) ?? 0) + 1);
        }
    };
    const reading = [read(), read()];
    for (let i = 0; i < 300; i++) {
      const next = join(at, `next-${i}.parquet`);
      const rows = 500 + (i % 5) * 300;
      await write(next, rows, i);
      const [w] = (
        await writer.runAndReadAll(`SELECT max(md5(range::VARCHAR || '${i}')) AS m FROM range(${rows})`)
      ).getRowObjects();
      written.add(`${rows}|${w!.m}`);
      renameSync(next, file);
    }
    writing = false;
    await Promise.all(reading);
    const failed = [...errors.values()].reduce((a, b) => a + b, 0);
    const wrong = answers.filter((a) => !written.has(a)).length;
    console.log(
      `${compression}: ${reads} reads ended well (${wrong} of them with rows no written file holds), ${failed} failed (${((100 * failed) / (reads + failed)).toFixed(1)}%)`,
    );
    for (const [what, n] of errors) console.log(`  ${n} × ${what}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
