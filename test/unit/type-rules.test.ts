/**
 * The type of each scalar of a subgraph of any schema, pinned with values at their extremes, stored as the exporter
 * stores a page (its page columns and INSERT, `store/ddl.ts`) and written to Parquet as the lake writer does
 * (`lakeSelect`), then read back through DuckDB and through polars (nodejs-polars, another Parquet reader):
 * - `Int8`: BIGINT, −2^63 and 2^63−1 exactly, an `Int8` id too;
 * - `BigInt`: DECIMAL(38,0), exact up to 38 digits (±(10^38−1)); NULL beyond (2^127, 2^255, −2^255), never a rounded
 *   figure; its text exact in `_text` (the lake's `_exact`) always;
 * - `BigInt` retyped `DOUBLE` by the subgraph's `types`: the nearest double, text beside;
 * - `BigDecimal`: DOUBLE, text beside;
 * - `Timestamp`: TIMESTAMPTZ, its microseconds exact.
 * The expected values are written out by hand. A folder whose BigInts an earlier version stored as DOUBLE has them cast
 * in place from their texts, and a `types` entry retypes a column either way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dataset, WAREHOUSE_SCHEMA } from '../../src/catalog/catalog.ts';
import { subgraphDatasetsOf } from '../../src/catalog/subgraph-datasets.ts';
import { subgraphModel } from '../../src/catalog/subgraphs.ts';
import { checkPage } from '../../src/export/mapper.ts';
import { lakeSelect } from '../../src/lake/layout.ts';
import { parseSchemaModel } from '../../src/schemas/entity-model.ts';
import { insertParts, pageColumns } from '../../src/store/ddl.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { lit, qt } from '../../src/util/sql.ts';

const SCHEMA = `
type Holder @entity(immutable: true) {
  id: Int8!
  long: Int8!
  big: BigInt!
  approx: BigInt!
  price: BigDecimal!
  at: Timestamp!
  bigs: [BigInt!]!
}
`;
const NAME = 'typerules';
const model = parseSchemaModel(NAME, SCHEMA);
const datasetWith = (types: Record<string, string> = {}): Dataset => subgraphDatasetsOf(NAME, model, { types })[0]!;

const P127 = (2n ** 127n).toString();
const P255 = (2n ** 255n).toString();
const N255 = (-(2n ** 255n)).toString();
const MAX38 = '9'.repeat(38);

/** The rows of the page, as graph-node sends them: Int8 and BigInt as decimal strings, Timestamp as microseconds. */
const PAGE = [
  {
    id: '1',
    long: '9223372036854775807',
    big: MAX38,
    approx: P255,
    price: '1.5',
    at: '1700000000123456',
    bigs: [MAX38, P127],
  },
  {
    id: '2',
    long: '-9223372036854775808',
    big: `-${MAX38}`,
    approx: '7',
    price: '-0.000000000000000001',
    at: '0',
    bigs: [],
  },
  { id: '3', long: '0', big: P127, approx: N255, price: '12345678901234567890.123', at: '1', bigs: [N255] },
  { id: '4', long: '1', big: P255, approx: '0', price: '0', at: '999999', bigs: ['0'] },
  { id: '5', long: '2', big: N255, approx: '1', price: '0.000000000000000000000000000001', at: '2', bigs: ['-1'] },
];

/** What a reader gets, by hand: each typed value as text (NULL as null), then the exact texts. */
const TYPED = {
  '1': {
    long: '9223372036854775807',
    big: MAX38,
    approx: '5.78960446186581e+76',
    at: 1700000000123456n,
    bigs: [MAX38, null],
  },
  '2': { long: '-9223372036854775808', big: `-${MAX38}`, approx: '7.0', at: 0n, bigs: [] },
  '3': { long: '0', big: null, approx: '-5.78960446186581e+76', at: 1n, bigs: [null] },
  '4': { long: '1', big: null, approx: '0.0', at: 999999n, bigs: ['0'] },
  '5': { long: '2', big: null, approx: '1.0', at: 2n, bigs: ['-1'] },
} as const;

let dir: string;
let w: Warehouse;

/** Stores the page into a fresh table of `ds`, as a batch of kept pages is stored. */
async function store(ds: Dataset): Promise<void> {
  checkPage(ds, 1, PAGE);
  const file = join(dir, 'page.json');
  writeFileSync(file, JSON.stringify(PAGE));
  const { target, select } = insertParts(ds, 'pages');
  await w.ensureTables([ds]);
  await w.exec(
    `INSERT INTO ${qt(ds.table)} (${target}, chain_id) SELECT ${select}, 1 FROM read_json(${lit(file)}, format = 'array', columns = ${pageColumns(ds)})`,
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-types-'));
  WAREHOUSE_SCHEMA[NAME] = NAME;
  w = await Warehouse.open(dir);
});
afterAll(async () => {
  await w?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the type of each scalar of any subgraph', () => {
  it('is declared by the rule, and types retype a field', async () => {
    const ds = datasetWith({ 'Holder.approx': 'double' });
    await store(ds);
    const types = Object.fromEntries(
      (
        await w.all(
          `SELECT column_name AS c, data_type AS t FROM duckdb_columns() WHERE schema_name = '${NAME}' AND table_name = 'holders'`,
        )
      ).map((r) => [String(r.c), String(r.t)]),
    );
    expect(types).toMatchObject({
      id: 'BIGINT',
      long: 'BIGINT',
      big: 'DECIMAL(38,0)',
      big_text: 'VARCHAR',
      approx: 'DOUBLE',
      approx_text: 'VARCHAR',
      price: 'DOUBLE',
      at: 'TIMESTAMP WITH TIME ZONE',
      bigs: 'DECIMAL(38,0)[]',
      bigs_text: 'VARCHAR[]',
    });
  });

  it('keeps every value exact or NULL in the warehouse, the text always', async () => {
    const rows = await w.all(
      `SELECT id, CAST(long AS VARCHAR) AS long, CAST(big AS VARCHAR) AS big, CAST(approx AS VARCHAR) AS approx, epoch_us("at") AS "at",
        CAST(bigs AS VARCHAR[]) AS bigs, big_text, approx_text, bigs_text, price_text FROM ${NAME}.holders ORDER BY id`,
    );
    for (const r of rows) {
      const want = TYPED[String(r.id) as keyof typeof TYPED];
      const sent = PAGE.find((p) => p.id === r.id)!;
      expect({ long: r.long, big: r.big, approx: r.approx, at: BigInt(String(r.at)), bigs: r.bigs }).toEqual(want);
      expect([r.big_text, r.approx_text, r.bigs_text, r.price_text]).toEqual([
        sent.big,
        sent.approx,
        sent.bigs,
        sent.price,
      ]);
    }
    expect(rows).toHaveLength(PAGE.length);
  });

  it('carries the same to Parquet, as DuckDB and polars read it', async () => {
    const ds = datasetWith({ 'Holder.approx': 'DOUBLE' });
    const file = join(dir, 'holders.parquet');
    await w.exec(`COPY (SELECT ${lakeSelect(ds)} FROM ${qt(ds.table)} ORDER BY id) TO ${lit(file)} (FORMAT parquet)`);
    const duck = await w.all(
      `SELECT id, CAST(long AS VARCHAR) AS long, CAST(big AS VARCHAR) AS big, epoch_us("at") AS "at", typeof(big) AS t, _exact.big AS exact
       FROM read_parquet(${lit(file)}) ORDER BY id`,
    );
    expect(duck.map((r) => [r.long, r.big, BigInt(String(r.at)), r.exact])).toEqual(
      PAGE.map((p) => {
        const want = TYPED[p.id as keyof typeof TYPED];
        return [want.long, want.big, want.at, p.big];
      }),
    );
    expect(duck[0]!.t).toBe('DECIMAL(38,0)');
    const df = pl.readParquet(file);
    expect(String(df.getColumn('big').dtype)).toBe('DataType(Decimal(38,0))');
    expect(String(df.getColumn('long').dtype)).toBe('DataType(Int64)');
    expect(String(df.getColumn('at').dtype)).toBe('DataType(Datetime(us,UTC))');
    const read = df
      .select(
        pl.col('id'),
        pl.col('long').cast(pl.Utf8),
        pl.col('big').cast(pl.Utf8),
        pl.col('at').cast(pl.Int64).cast(pl.Utf8).alias('us'),
        pl.col('approx'),
      )
      .toRecords();
    expect(read.map((r) => [r.long, r.big, r.us, r.approx])).toEqual(
      PAGE.map((p) => {
        const want = TYPED[p.id as keyof typeof TYPED];
        return [want.long, want.big, String(want.at), Number(p.approx)];
      }),
    );
  });

  it('casts a BigInt stored as DOUBLE by an earlier version in place, from its text, and a types entry back', async () => {
    // An earlier version's table: the BigInt `big` as DOUBLE beside its text.
    await w.exec(`DROP TABLE ${NAME}.holders`);
    await store(datasetWith({ 'Holder.big': 'DOUBLE', 'Holder.bigs': 'DOUBLE[]', 'Holder.approx': 'DOUBLE' }));
    const typeOf = async (c: string) =>
      String(
        (
          await w.all(
            `SELECT data_type AS t FROM duckdb_columns() WHERE schema_name = '${NAME}' AND table_name = 'holders' AND column_name = '${c}'`,
          )
        )[0]!.t,
      );
    expect(await typeOf('big')).toBe('DOUBLE');
    await w.ensureTables([datasetWith({ 'Holder.approx': 'DOUBLE' })]);
    expect([await typeOf('big'), await typeOf('bigs')]).toEqual(['DECIMAL(38,0)', 'DECIMAL(38,0)[]']);
    const big = await w.all(
      `SELECT id, CAST(big AS VARCHAR) AS big, CAST(bigs AS VARCHAR[]) AS bigs FROM ${NAME}.holders ORDER BY id`,
    );
    expect(big.map((r) => [r.big, r.bigs])).toEqual(
      PAGE.map((p) => [TYPED[p.id as keyof typeof TYPED].big, TYPED[p.id as keyof typeof TYPED].bigs]),
    );
    // And back to DOUBLE by a `types` entry: the nearest double of each text, none NULL.
    await w.ensureTables([datasetWith({ 'Holder.big': 'DOUBLE', 'Holder.approx': 'DOUBLE' })]);
    const back = await w.all(`SELECT id, big FROM ${NAME}.holders ORDER BY id`);
    expect(back.map((r) => r.big)).toEqual(PAGE.map((p) => Number(p.big)));
    const pending = await w.all(
      `SELECT count(*) AS n FROM _pool_export.lake_pending WHERE dataset = '${NAME}.holders'`,
    );
    expect(Number(pending[0]!.n)).toBeGreaterThan(0);
  });

  it('refuses a types entry that names no field, a fixed type, or a type its field cannot take', () => {
    const spec = (types: Record<string, string>) => ({ name: NAME, schema: SCHEMA, types });
    expect(() => subgraphModel(spec({ 'Holder.nope': 'DOUBLE' }))).toThrow(
      /Holder has no stored field nope; its fields: id, long/,
    );
    expect(() => subgraphModel(spec({ 'Pool.big': 'DOUBLE' }))).toThrow(/no entity Pool/);
    expect(() => subgraphModel(spec({ 'Holder.id': 'BIGINT' }))).toThrow(/whose type is fixed/);
    expect(() => subgraphModel(spec({ 'Holder.big': 'INTEGER' }))).toThrow(
      /"INTEGER" is not a type of a BigInt field; give one of DECIMAL\(38,0\), DOUBLE, BIGINT, VARCHAR/,
    );
    expect(() => subgraphModel(spec({ 'Holder.bigs': 'DOUBLE' }))).toThrow(
      /give one of DECIMAL\(38,0\)\[\], DOUBLE\[\]/,
    );
    expect(() => subgraphModel(spec({ 'Holder.big': 'decimal(38, 0)', 'Holder.bigs': 'double[]' }))).not.toThrow();
  });
});
