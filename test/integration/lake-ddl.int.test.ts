/**
 * `lake ddl`, against a real export of the sandbox (test/support/exported-lake.ts): each engine's DDL names the columns
 * and types of the lake's own Parquet files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadataAsync, parquetSchema } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { lakeDdl, lakeTables } from '../../src/lake/lake-ddl.ts';
import { cli } from '../support/cli-process.ts';
import { data, env, parquetFiles, useExportedLake } from '../support/exported-lake.ts';

useExportedLake();

/**
 * A Parquet file's columns as each engine's DDL must name them, read from the file's own schema by hyparquet (the
 * oracle: the files, not the catalog that `lake ddl` derives its types from).
 */
type Node = ReturnType<typeof parquetSchema>;
function engineType(n: Node, engine: 'trino' | 'hive'): string {
  const e = n.element;
  const lt = e.logical_type as { type?: string } | undefined;
  if (!e.num_children) {
    if (e.type === 'BYTE_ARRAY' && e.converted_type === 'UTF8') return engine === 'trino' ? 'varchar' : 'string';
    if (e.type === 'INT32') return engine === 'trino' ? 'integer' : 'int';
    if (e.type === 'INT64' && lt?.type === 'TIMESTAMP') return engine === 'trino' ? 'timestamp(3)' : 'timestamp';
    if (e.type === 'INT64') return 'bigint';
    if (e.type === 'DOUBLE') return 'double';
    if (e.type === 'BOOLEAN') return 'boolean';
    throw new Error(`no engine type for ${JSON.stringify(e)}`);
  }
  if (e.converted_type === 'LIST') {
    const element = engineType(n.children[0]!.children[0]!, engine);
    return engine === 'trino' ? `array(${element})` : `array<${element}>`;
  }
  const fields = n.children.map((c) =>
    engine === 'trino'
      ? `"${c.element.name}" ${engineType(c, engine)}`
      : `\`${c.element.name}\`:${engineType(c, engine)}`,
  );
  return engine === 'trino' ? `row(${fields.join(', ')})` : `struct<${fields.join(',')}>`;
}

async function fileColumns(file: string, engine: 'trino' | 'hive'): Promise<string[]> {
  const buf = readFileSync(file);
  const schema = parquetSchema(
    await parquetMetadataAsync(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)),
  );
  const quote = (name: string) => (engine === 'trino' ? `"${name}"` : `\`${name}\``);
  return schema.children.map((c) => `${quote(c.element.name)} ${engineType(c, engine)}`);
}

/** The CREATE TABLE statements of `lake ddl` output: each table's name and its column lines (`"name" type`). */
function createdTables(ddl: string): Map<string, { columns: string[]; partitionedBy: string }> {
  const out = new Map<string, { columns: string[]; partitionedBy: string }>();
  for (const m of ddl.matchAll(/CREATE (?:EXTERNAL )?TABLE IF NOT EXISTS (\S+) \(\n([\s\S]*?)\n\)([\s\S]*?);/g)) {
    const columns = m[2]!.split(',\n').map((l) => l.trim());
    out.set(m[1]!.replace(/^"hive"\./, '').replaceAll(/["`]/g, ''), { columns, partitionedBy: m[3]! });
  }
  return out;
}

describe('lake ddl', () => {
  const lake = () => join(data, 'lake');
  const withFiles = () =>
    lakeTables()
      .map((t) => ({ t, files: parquetFiles(join(lake(), t.path)) }))
      .filter((x) => x.files.length > 0);

  it('names every column of every table path with the type its Parquet files hold, for Trino, Spark and Athena', async () => {
    const tables = withFiles();
    expect(tables.length).toBeGreaterThan(30);
    for (const [engine, args, kind] of [
      ['trino', ['--url', 's3://lake-bucket/pe'], 'trino'],
      ['spark', [], 'hive'],
      ['athena', ['--url', 's3://lake-bucket/pe'], 'hive'],
    ] as const) {
      const r = await cli(['lake', 'ddl', '--engine', engine, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      const created = createdTables(r.stdout);
      expect(created.size, engine).toBe(lakeTables().length);
      for (const { t, files } of tables) {
        const got = created.get(`${t.schema}.${t.name}`)!;
        const partitions = t.partitions.map((p) => (kind === 'trino' ? `"${p}" varchar` : `\`${p}\` string`));
        // Trino and Spark list the partition columns last among the columns; Athena in PARTITIONED BY.
        const expected = [...(await fileColumns(files[0]!, kind)), ...(engine === 'athena' ? [] : partitions)];
        expect(got.columns, `${engine} ${t.path}`).toEqual(expected);
        if (engine === 'athena') expect(got.partitionedBy).toContain(`PARTITIONED BY (${partitions.join(', ')})`);
      }
    }
  });

  it('gives Trino and Athena the bucket URL and Spark the local lake, with Athena projecting every chain and month', async () => {
    const trino = (await cli(['lake', 'ddl', '--engine', 'trino', '--url', 's3://lake-bucket/pe'], env)).stdout;
    expect(trino).toContain(`CREATE TABLE IF NOT EXISTS "hive"."dodoex"."swaps" (`);
    expect(trino).toContain(
      "external_location = 's3://lake-bucket/pe/dodoex/swaps/',\n  partitioned_by = ARRAY['chain', 'month']",
    );
    expect(trino).toContain(`CALL "hive".system.sync_partition_metadata('dodoex', 'swaps', 'FULL');`);
    expect(trino).toContain(
      "external_location = 's3://lake-bucket/pe/dodoex/pairs/',\n  partitioned_by = ARRAY['chain']\n",
    );
    const spark = (await cli(['lake', 'ddl', '--engine', 'spark'], env)).stdout;
    expect(spark).toContain(
      `PARTITIONED BY (\`chain\`, \`month\`)\nLOCATION 'file://${join(data, 'lake')}/dodoex/swaps';`,
    );
    expect((await cli(['lake', 'ddl', '--engine', 'spark', '--url', 's3://lake-bucket/pe'], env)).stdout).toContain(
      "LOCATION 's3a://lake-bucket/pe/dodoex/swaps';",
    );
    const athena = (await cli(['lake', 'ddl', '--engine', 'athena', '--url', 's3://lake-bucket/pe'], env)).stdout;
    const months = readdirSync(join(data, 'lake', 'dodoex', 'swaps', 'chain=bsc')).sort();
    expect(athena).toContain(`'projection.month.range' = '${months[0]!.slice('month='.length)},NOW'`);
    expect(athena).toContain(
      "'projection.chain.values' = 'ethereum,bsc,polygon,arbitrum,moonriver,aurora,avax,optimism'",
    );
    expect(athena).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Athena's template, written as Athena reads it
      "'storage.location.template' = 's3://lake-bucket/pe/dodoex/swaps/chain=${chain}/month=${month}/'",
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Athena's template, written as Athena reads it
    expect(athena).toContain("'storage.location.template' = 's3://lake-bucket/pe/dodoex/pairs/chain=${chain}/'");
  });

  it('gives DuckDB views that read every row of every table path, and empty tables of the same columns where no file is yet', async () => {
    const r = await cli(['lake', 'ddl', '--engine', 'duckdb'], env);
    expect(r.code, r.stderr).toBe(0);
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      await conn.run(r.stdout);
      const tables = withFiles();
      for (const { t, files } of tables) {
        let rows = 0;
        for (const f of files) {
          const buf = readFileSync(f);
          rows += Number(
            (await parquetMetadataAsync(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))).num_rows,
          );
        }
        const n = (await conn.runAndReadAll(`SELECT count(*) AS n FROM "${t.schema}"."${t.name}"`)).getRowObjectsJson();
        expect(Number(n[0]!.n), t.path).toBe(rows);
      }
      // The empty tables' columns equal what views over files give: the same statements with every path empty.
      const describe = async (c: typeof conn, name: string) =>
        (await c.runAndReadAll(`DESCRIBE ${name}`)).getRowObjectsJson().map((x) => `${x.column_name} ${x.column_type}`);
      const asEmpty = await (await DuckDBInstance.create(':memory:')).connect();
      await asEmpty.run(
        lakeDdl('duckdb', {
          root: join(data, 'lake'),
          chains: [],
          since: '2020-01',
          catalog: 'hive',
          empty: new Set(lakeTables().map((t) => t.path)),
        }),
      );
      for (const { t } of tables)
        expect(await describe(asEmpty, `"${t.schema}"."${t.name}"`), t.path).toEqual(
          await describe(conn, `"${t.schema}"."${t.name}"`),
        );
      asEmpty.closeSync();
      const empty = lakeTables().filter((t) => !tables.some((x) => x.t.path === t.path));
      expect(empty.length).toBeGreaterThan(0);
      expect(r.stdout).toContain(`-- ${empty[0]!.path} holds no file yet`);
    } finally {
      conn.closeSync();
    }
  });

  it('refuses a bad engine, month or catalog, and a local lake for the engines that read a bucket, with exit 2', async () => {
    for (const [args, message] of [
      [['--engine', 'hive'], /engine "hive" is not one of duckdb, trino, spark, athena/],
      [[], /--engine duckdb, trino, spark or athena/],
      [['--engine', 'athena', '--url', 's3://b-b/p', '--since', '2021-13'], /--since takes a month as YYYY-MM/],
      [['--engine', 'trino', '--url', 's3://b-b/p', '--catalog', 'a;b'], /--catalog takes the name of a Trino catalog/],
      [['--engine', 'athena'], /athena reads the lake from object storage.*set lake\.url.*--url s3:\/\/bucket\/prefix/],
      [['--engine', 'trino', '--url', '/tmp/lake'], /--url is a local folder/],
    ] as const) {
      const r = await cli(['lake', 'ddl', ...args], env);
      expect([r.code, r.stderr], args.join(' ')).toEqual([2, expect.stringMatching(message)]);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });
});
