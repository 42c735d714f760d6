/**
 * A lake of layout 1, as pool-export 67fd1e4 wrote it (test/fixtures/lake-v1.tar.gz, see
 * test/support/migration-fixture.ts), is refused by the readers with the command that migrates it; `migrate` rewrites
 * it into layout 2 with every table's rows unchanged, and the export goes on from there. The digests are computed here
 * from the files alone: the old layout's `_text` columns against the new one's `_exact` struct, column by column of
 * the catalog, each row hashed and the hashes summed (so that neither order nor partition matters).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type Dataset } from '../../src/catalog/catalog.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { hasText } from '../../src/store/ddl.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { FIXTURE_ADVANCE, FIXTURE_CHAIN, FIXTURE_SANDBOX_FLAGS, FIXTURES } from '../support/migration-fixture.ts';

let sb: SandboxProcess;
let data: string;

beforeAll(async () => {
  data = mkdtempSync(join(tmpdir(), 'pool-export-lake-migrate-'));
  execFileSync('tar', ['-C', data, '-xzf', fileURLToPath(FIXTURES.lake.file)]);
  sb = await startSandbox(FIXTURE_SANDBOX_FLAGS);
  await sb.control('advance', { blocks: FIXTURE_ADVANCE });
});
afterAll(async () => {
  await sb?.stop();
  rmSync(data, { recursive: true, force: true });
});

/** The folders of a table in each layout: its rows (for mutable entities, the state) and its history. */
function globs(ds: Dataset, layout: 1 | 2): { rows: string; history?: string } {
  const [schema, table] = ds.table.split('.') as [string, string];
  const base = join(data, 'lake', schema, table);
  if (layout === 1)
    return ds.kind === 'mutable'
      ? { rows: join(base, 'current/*/*.parquet'), history: join(base, 'history/*/*/*.parquet') }
      : { rows: join(base, '*/*/*.parquet') };
  return ds.kind === 'mutable'
    ? { rows: join(base, '*/*.parquet'), history: join(`${base}_history`, '*/*/*.parquet') }
    : { rows: join(base, '*/*/*.parquet') };
}

/** Row count and the sum of every row's hash over the catalog's columns, their exact texts and the exporter's. */
async function digest(glob: string, ds: Dataset, layout: 1 | 2): Promise<string> {
  const text = (c: string) => (layout === 1 ? `"${c}_text"` : `"_exact"."${c}"`);
  const cols = ds.columns.flatMap((c) => [
    `CAST("${c.column}" AS VARCHAR)`,
    ...(hasText(c) ? [`CAST(${text(c.column)} AS VARCHAR)`] : []),
  ]);
  cols.push('chain_id', '_block', '_run_id', 'CAST(_taken_at AS VARCHAR)');
  const i = await DuckDBInstance.create(':memory:');
  const c = await i.connect();
  try {
    const sql = `SELECT count(*) AS n, CAST(sum(hash(${cols.join(', ')})::HUGEINT) AS VARCHAR) AS h FROM read_parquet('${glob}', union_by_name = true, hive_partitioning = false)`;
    const r = (await c.runAndReadAll(sql)).getRowObjectsJson()[0]!;
    return `${r.n} rows, ${r.h}`;
  } finally {
    c.closeSync();
    i.closeSync();
  }
}

/** Every table's digest in one layout, for the tables whose folders hold files. */
async function digests(layout: 1 | 2): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const ds of DATASETS) {
    const g = globs(ds, layout);
    for (const [name, glob] of [
      [ds.name, g.rows],
      [`${ds.name}_history`, g.history],
    ] as const)
      if (glob) {
        const d = await digest(glob, ds, layout).catch((e: Error) =>
          /No files found/.test(e.message) ? undefined : Promise.reject(e),
        );
        if (d) out.set(name, d);
      }
  }
  return out;
}

describe('a lake written by 67fd1e4 (layout 1)', () => {
  it('is refused by readers, rewritten by `migrate` with every table equal, and the export goes on', async () => {
    const env = sandboxEnv(sb, data);
    const before = await digests(1);
    expect(before.size).toBeGreaterThan(30);
    // Runs wrote part files per run in layout 1: the snapshots, the list and the history hold two runs each.
    expect(before.get('dodoex.dodo_zoos')).toMatch(/^2 rows/);

    const q = await cli(['query', 'SELECT count(*) FROM dodoex.swaps'], env);
    expect(q.code).toBe(1);
    expect(q.stderr).toMatch(
      /was written by an earlier pool-export \(layout 1; this one reads layout 2\); run `pool-export migrate` \(or any `pool-export run`\)/,
    );

    const m = await cli(['migrate'], env);
    expect(m.code, m.stdout + m.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(data, 'lake', '_layout.json'), 'utf8'))).toEqual({ layout: 2 });
    expect(existsSync(join(data, 'lake.new')) || existsSync(join(data, 'lake.old'))).toBe(false);
    const after = await digests(2);
    expect([...after.entries()].sort()).toEqual([...before.entries()].sort());
    // Nothing of layout 1 is left: no day folder, no history inside a state's table path.
    expect(execFileSync('find', [join(data, 'lake'), '-name', 'day=*', '-o', '-name', 'current']).toString()).toBe('');

    const q2 = await cli(['query', 'SELECT count(*) AS n FROM dodoex.swaps', '--format', 'json'], env);
    expect(q2.code, q2.stderr).toBe(0);
    expect(`${JSON.parse(q2.stdout)[0].n} rows`).toBe(before.get('dodoex.swaps')!.split(',')[0]);

    await sb.control('advance', { blocks: 200 });
    const next = await cli(['run', '--chains', 'bsc'], env);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect((await compareWithSandbox(sb, data, [FIXTURE_CHAIN])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 120_000);
});
