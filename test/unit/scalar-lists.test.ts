/**
 * Lists of scalars typed by their element: `[Int!]` as INTEGER[], `[Int8!]` and `[Timestamp!]` as BIGINT[],
 * `[Boolean!]` as BOOLEAN[], `[BigInt!]` as DECIMAL(38,0)[] (NULL beyond 38 digits) and `[BigDecimal!]` as DOUBLE[] with their exact texts beside (`_text`,
 * VARCHAR[]), text as VARCHAR[]; in the warehouse and in the lake. A `Timestamp` is TIMESTAMPTZ (microseconds exactly; a
 * list of them stays BIGINT[] microseconds). The export is exact against the sandbox's rows. A
 * warehouse that stored such a list as text, or a Timestamp as BIGINT (an earlier version), has it cast in place on its
 * next run, the texts kept, and its lake files rebuilt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { openLakeDb } from '../../src/reports/views.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/scalar-lists.graphql', import.meta.url));

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '1000', '--chains', '1', '--subgraph', `lists=${FIXTURE}`]);
  dir = mkdtempSync(join(tmpdir(), 'pe-scalar-lists-'));
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const TYPES = {
  ints: 'INTEGER[]',
  maybe_ints: 'INTEGER[]',
  bigs: 'DECIMAL(38,0)[]',
  bigs_text: 'VARCHAR[]',
  decimals: 'DOUBLE[]',
  decimals_text: 'VARCHAR[]',
  flags: 'BOOLEAN[]',
  longs: 'BIGINT[]',
  blobs: 'VARCHAR[]',
  names: 'VARCHAR[]',
  stamps: 'BIGINT[]',
  at: 'TIMESTAMP WITH TIME ZONE',
  peers: 'VARCHAR[]',
};

async function columnTypes(data: string): Promise<Record<string, string>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all(
      "SELECT column_name AS c, data_type AS t FROM duckdb_columns() WHERE schema_name = 'lists' AND table_name = 'holders'",
    );
    return Object.fromEntries(rows.filter((r) => String(r.c) in TYPES).map((r) => [String(r.c), String(r.t)]));
  } finally {
    await w.close();
  }
}

describe('lists of scalars', () => {
  it('are typed by their element in the warehouse and the lake, exactly as the upstream sent them', async () => {
    const data = join(dir, 'a');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph lists: (\S+)$/m.exec(sb.banner)![1]!;
    const added = await cli(['subgraph', 'add', 'lists', '--chain', 'ethereum', '--url', url], env);
    expect(added.code, added.stderr).toBe(0);
    const run = await cli(['run', '--subgraphs', 'lists'], env);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(await columnTypes(data)).toEqual(TYPES);
    loadConfig({ env });
    expect((await compareWithSandbox(sb, data, [1], ['lists.holders'])).mismatches).toEqual([]);
    // The lake's files carry the same types; each number beside its exact text.
    const lake = await openLakeDb(data);
    try {
      const types = Object.fromEntries(
        (await lake.conn.runAndReadAll('DESCRIBE lists.holders'))
          .getRowObjectsJson()
          .map((r) => [String(r.column_name), String(r.column_type)]),
      );
      expect(types).toMatchObject({
        ints: 'INTEGER[]',
        bigs: 'DECIMAL(38,0)[]',
        flags: 'BOOLEAN[]',
        longs: 'BIGINT[]',
        at: 'TIMESTAMP WITH TIME ZONE',
      });
      expect(types._exact).toContain('bigs VARCHAR[]');
      const [n] = (
        await lake.conn.runAndReadAll(
          'SELECT count(*) FILTER (WHERE len(bigs) > 0 AND len(bigs) = len(_exact.bigs)) AS n FROM lists.holders',
        )
      ).getRowObjectsJson();
      expect(Number(n!.n)).toBeGreaterThan(0);
    } finally {
      lake.close();
    }
  });

  it('that an earlier version stored as text, and Timestamps it stored as BIGINT, are cast in place on the next run', async () => {
    const data = join(dir, 'b');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph lists: (\S+)$/m.exec(sb.banner)![1]!;
    expect((await cli(['subgraph', 'add', 'lists', '--chain', 'ethereum', '--url', url], env)).code).toBe(0);
    expect((await cli(['run', '--subgraphs', 'lists'], env)).code).toBe(0);
    // The table as an earlier version kept it: every list of scalars as text, no exact texts beside.
    const w = await Warehouse.open(data);
    try {
      for (const c of ['ints', 'maybe_ints', 'bigs', 'decimals', 'flags', 'longs', 'stamps'])
        await w.exec(
          `ALTER TABLE lists.holders ALTER COLUMN ${c} SET DATA TYPE VARCHAR[] USING CAST(${c} AS VARCHAR[])`,
        );
      await w.exec('UPDATE lists.holders SET bigs = bigs_text, decimals = decimals_text');
      await w.exec('ALTER TABLE lists.holders ALTER COLUMN "at" SET DATA TYPE BIGINT USING epoch_us("at")');
      for (const c of ['bigs_text', 'decimals_text']) await w.exec(`ALTER TABLE lists.holders DROP COLUMN ${c}`);
    } finally {
      await w.close();
    }
    await sb.control('advance', { blocks: 3 });
    const run = await cli(['run', '--subgraphs', 'lists'], env);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(await columnTypes(data)).toEqual(TYPES);
    loadConfig({ env });
    expect((await compareWithSandbox(sb, data, [1], ['lists.holders'])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  });
});
