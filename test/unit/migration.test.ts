/**
 * The version 1 → 2 migration in-process, on the warehouse that pool-export at ab1d11f really wrote
 * (test/fixtures/warehouse-v1.tar.gz, see test/support/migration-fixture.ts). Values are checked against their exact
 * text through decimal.js, not through the migration's own casts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Decimal } from 'decimal.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { MigrationNeededError } from '../../src/errors.ts';
import { hasText } from '../../src/store/ddl.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { q, qt } from '../../src/util/sql.ts';
import { FIXTURE_FILE } from '../support/migration-fixture.ts';

let data: string;
beforeEach(() => {
  data = mkdtempSync(join(tmpdir(), 'pool-export-migrate-unit-'));
  execFileSync('tar', ['-C', data, '-xzf', fileURLToPath(FIXTURE_FILE)]);
});
afterEach(() => rmSync(data, { recursive: true, force: true }));

describe('the migration from version 1', () => {
  it('read-only opens refuse with the command that migrates; a writable open migrates every numeric column exactly', async () => {
    await expect(Warehouse.open(data, { readOnly: true })).rejects.toThrow(MigrationNeededError);
    await expect(Warehouse.open(data, { readOnly: true })).rejects.toThrow(
      `(schema version 1; this one needs ${SCHEMA_VERSION}); run \`pool-export migrate\``,
    );
    const w = await Warehouse.open(data);
    try {
      expect(await w.all("SELECT value FROM _pool_export.meta WHERE key = 'schema_version'")).toEqual([
        { value: String(SCHEMA_VERSION) },
      ]);
      const tables = new Set(
        (await w.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables()")).map((r) => String(r.t)),
      );
      let checked = 0;
      for (const ds of DATASETS.filter((d) => tables.has(d.table))) {
        const numeric = ds.columns.filter(hasText);
        if (!numeric.length) continue;
        const cols = numeric.flatMap((c) => [`${q(c.column)}::VARCHAR AS ${q(c.column)}`, q(`${c.column}_text`)]);
        const rows = await w.all(`SELECT ${cols.join(', ')} FROM ${qt(ds.table)}`);
        for (const r of rows)
          for (const c of numeric) {
            const text = r[`${c.column}_text`];
            if (text === null) {
              expect(r[c.column], `${ds.name}.${c.column}`).toBeNull();
              continue;
            }
            const exact = new Decimal(String(text));
            const got = r[c.column];
            expect(got, `${ds.name}.${c.column} for ${text}`).not.toBeNull();
            if (c.cls === 'bigint') expect(String(got)).toBe(exact.toFixed(0));
            else expect(Number(got)).toBe(exact.toNumber());
            checked++;
          }
        // Every numeric column is DOUBLE or BIGINT now.
        const types = await w.all(
          `SELECT column_name AS c, data_type AS t FROM duckdb_columns() WHERE schema_name || '.' || table_name = '${ds.table}'`,
        );
        for (const c of numeric)
          expect(types.find((t) => t.c === c.column)?.t, `${ds.name}.${c.column}`).toBe(
            c.cls === 'bigint' ? 'BIGINT' : 'DOUBLE',
          );
      }
      expect(checked).toBeGreaterThan(1000);
      // The lake of every dataset is marked for a rebuild; mutable datasets read everything again once.
      const pending = await w.all(
        'SELECT DISTINCT dataset FROM _pool_export.lake_pending WHERE rebuild AND from_seq = 0 ORDER BY dataset',
      );
      const withRows = [];
      for (const ds of DATASETS.filter((d) => tables.has(d.table)))
        if (Number((await w.all(`SELECT count(*) AS n FROM ${qt(ds.table)}`))[0]!.n) > 0) withRows.push(ds.name);
      expect(pending.map((p) => p.dataset)).toEqual(withRows.sort());
      const modes = await w.all(
        "SELECT DISTINCT json_extract_string(cursor, '$.mode') AS m FROM _pool_export.checkpoints WHERE dataset IN (SELECT name FROM (VALUES ('dodoex.pairs'), ('dodoex.tokens')) v(name))",
      );
      expect(modes).toEqual([{ m: 'full' }]);
      const cols = await w.all(
        "SELECT column_name AS c FROM duckdb_columns() WHERE schema_name = '_pool_export' AND table_name = 'run_tasks' AND column_name = 'out_of_range'",
      );
      expect(cols).toEqual([]);
      expect(
        await w.all("SELECT count(*)::INTEGER AS n FROM duckdb_functions() WHERE function_name LIKE 'pe_dec%'"),
      ).toEqual([{ n: 0 }]);
    } finally {
      await w.close();
    }
    // Opening again finds version 2 and migrates nothing.
    const again = await Warehouse.open(data, { readOnly: true });
    await again.close();
  });
});
