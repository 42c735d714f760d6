/**
 * A warehouse and lake written by an earlier version (schema version 1: DECIMAL(38,18) and HUGEINT, NULL where a
 * value did not fit; see test/support/migration-fixture.ts) are migrated on first open for writing, and the export
 * then goes on exactly. A read-only command stops before that with an error naming the command that migrates.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse, nullNumbers } from '../support/export-check.ts';
import { FIXTURE_ADVANCE, FIXTURE_CHAIN, FIXTURE_FILE, FIXTURE_SANDBOX_FLAGS } from '../support/migration-fixture.ts';

let sb: SandboxProcess;
let data: string;

beforeEach(async () => {
  data = mkdtempSync(join(tmpdir(), 'pool-export-migrate-'));
  execFileSync('tar', ['-C', data, '-xzf', fileURLToPath(FIXTURE_FILE)]);
  // The sandbox as it was at the fixture's last run.
  sb = await startSandbox(FIXTURE_SANDBOX_FLAGS);
  await sb.control('advance', { blocks: FIXTURE_ADVANCE });
});
afterEach(async () => {
  await sb?.stop();
  rmSync(data, { recursive: true, force: true });
});

/** Runs one query on a DuckDB file as it is, without the exporter's code. */
async function raw(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const i = await DuckDBInstance.create(file, file === ':memory:' ? {} : { access_mode: 'READ_ONLY' });
  const c = await i.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJson();
  } finally {
    c.closeSync();
    i.closeSync();
  }
}

/** The Parquet type of a column in every file of a dataset's lake folder. */
async function lakeTypes(dataset: string, column: string): Promise<string[]> {
  const [schema, table] = dataset.split('.');
  const rows = await raw(
    ':memory:',
    // The exact texts of layout 2 are fields of the same names in `_exact`, always text (BYTE_ARRAY): not this column.
    `SELECT DISTINCT type AS t FROM parquet_schema('${join(data, 'lake', schema!, table!)}/**/*.parquet') WHERE name = '${column}' AND type <> 'BYTE_ARRAY'`,
  );
  return rows.map((r) => String(r.t)).sort();
}

describe('a warehouse written by an earlier version', () => {
  it.each([['migrate'], ['run']])(
    'is migrated by `%s`: numbers recomputed from their exact text, the lake rebuilt, and the export goes on exactly',
    async (command) => {
      const env = sandboxEnv(sb, data);
      // What the earlier version left: numbers that did not fit DECIMAL(38,18) are NULL, and the lake holds decimals.
      const before = await raw(
        join(data, 'warehouse.duckdb'),
        'SELECT count(*) FILTER (WHERE base_reserve IS NULL) AS n, any_value(typeof(base_reserve)) AS t FROM dodoex.pairs',
      );
      expect(Number(before[0]!.n)).toBeGreaterThan(0);
      expect(before[0]!.t).toBe('DECIMAL(38,18)');
      expect(await lakeTypes('dodoex.swaps', 'amount_in')).toEqual(['FIXED_LEN_BYTE_ARRAY']);

      // A read-only command cannot migrate: it says which command does.
      const status = await cli(['status', '--offline'], env);
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(
        /was written by an earlier pool-export \(schema version 1; this one needs 2\); run `pool-export migrate` \(or any `pool-export run`\)/,
      );

      const first = await cli(command === 'migrate' ? ['migrate'] : ['run', '--chains', 'bsc'], env);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(
        await raw(join(data, 'warehouse.duckdb'), "SELECT value FROM _pool_export.meta WHERE key = 'schema_version'"),
      ).toEqual([{ value: '2' }]);
      expect(await nullNumbers(data)).toEqual([]);
      expect(await lakeTypes('dodoex.swaps', 'amount_in')).toEqual(['DOUBLE']);
      expect(await lakeTypes('dodoex.pairs', 'base_reserve')).toEqual(['DOUBLE']);
      expect(await lakeTypes('dodoex.swaps', 'timestamp')).toEqual(['INT64']);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
      // The earlier version read mutable entities by updatedAt alone and missed rows whose updatedAt is null: every
      // mutable dataset is read whole once more (its cursor is back to a full pass), then goes on incrementally.
      if (command === 'migrate') {
        const modes = await raw(
          join(data, 'warehouse.duckdb'),
          "SELECT DISTINCT json_extract_string(cursor, '$.mode') AS m FROM _pool_export.checkpoints WHERE dataset IN ('dodoex.maintainer_earnings', 'dodoex.lp_tokens', 'dodoex.pairs')",
        );
        expect(modes).toEqual([{ m: 'full' }]);
      }

      await sb.control('advance', { blocks: 200 });
      const next = await cli(['run', '--chains', 'bsc'], env);
      expect(next.code, next.stdout + next.stderr).toBe(0);
      const cmp = await compareWithSandbox(sb, data, [FIXTURE_CHAIN]);
      expect(cmp.mismatches).toEqual([]);
      expect(cmp.checked).toBe(40);
      expect(await nullNumbers(data)).toEqual([]);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
    },
    120_000,
  );
});
