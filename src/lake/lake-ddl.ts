/**
 * `pool-export lake ddl`: the statements that make the lake's table paths tables of another engine, derived from the
 * catalog as the lake writer's SELECT list is (`layout.ts` `lakeSelect`), so that every column carries the type its
 * Parquet files hold:
 * - DuckDB: views over `read_parquet` with Hive partitions (`httpfs` for a bucket);
 * - Trino: external tables of the Hive connector, then `sync_partition_metadata`;
 * - Spark: Parquet tables at the table paths, then `MSCK REPAIR TABLE`;
 * - Athena: external tables with partition projection (chains as an enum, months as dates), so that no crawler or
 *   `MSCK REPAIR` is needed as months are added.
 *
 * A table path holds Parquet files and `_manifest.json`; the engines skip files whose names start with `_`.
 */
import { DATASETS, type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import type { StructType } from '../catalog/column.ts';
import { hasText } from '../store/ddl.ts';
import { lit, q } from '../util/sql.ts';
import { byMonth, hasHistory, seqColumn, type TablePart } from './layout.ts';

/** The engines `lake ddl` writes for. */
export const ENGINES = ['duckdb', 'trino', 'spark', 'athena'] as const;
export type Engine = (typeof ENGINES)[number];

/** A column type of the lake's files, engine-neutral. */
export type LakeType =
  | 'varchar'
  | 'integer'
  | 'bigint'
  | 'boolean'
  | 'double'
  | 'decimal38'
  | 'timestamptz'
  | { readonly list: LakeType }
  | { readonly struct: readonly (readonly [name: string, type: LakeType])[] };

export interface LakeColumn {
  readonly name: string;
  readonly type: LakeType;
}

/** One table path of the lake as a table. */
export interface LakeTable {
  /** Its schema and name as the engines get them: `dodoex`, `swaps` (or `swaps_history`). */
  readonly schema: string;
  readonly name: string;
  /** Its path below the lake's root: `dodoex/swaps`. */
  readonly path: string;
  /** The columns of its files, in their order. */
  readonly columns: readonly LakeColumn[];
  /** Its partition folders, outermost first: `chain`, then `month` (every table path but a mutable entity's state). */
  readonly partitions: readonly ('chain' | 'month')[];
}

function structType(t: StructType): LakeType {
  return {
    struct: Object.entries(t).map(([k, v]) => [k, v === 'text' ? 'varchar' : v === 'bool' ? 'boolean' : structType(v)]),
  };
}

/** The lake type of a catalog column (the warehouse's SQL type in `store/ddl.ts`, which the lake writer casts to). */
function columnType(c: Dataset['columns'][number]): LakeType {
  switch (c.cls) {
    case 'text':
    case 'ref':
      return 'varchar';
    case 'int':
      return 'integer';
    case 'timestamp':
      return 'timestamptz';
    case 'int8':
    case 'bigint':
      return 'bigint';
    case 'bool':
      return 'boolean';
    case 'raw':
    case 'decimal':
      return 'double';
    case 'integer':
      return 'decimal38';
    case 'list':
      return { list: c.elem ? columnType({ ...c, cls: c.elem }) : 'varchar' };
    case 'structs':
      return { list: structType(c.struct!) };
  }
}

/** The columns of a table path's files, in the order `lakeSelect` writes them. */
export function lakeColumns(ds: Dataset): LakeColumn[] {
  const seq = seqColumn(ds);
  const cols: LakeColumn[] = [];
  for (const c of ds.columns) {
    cols.push({ name: c.column, type: columnType(c) });
    if (c.column === seq) cols.push({ name: 'time', type: 'timestamptz' });
  }
  cols.push(
    { name: 'chain_id', type: 'integer' },
    { name: '_block', type: 'bigint' },
    { name: '_run_id', type: 'varchar' },
    { name: '_taken_at', type: 'timestamptz' },
  );
  const texts = ds.columns.filter(hasText);
  if (texts.length > 0)
    cols.push({
      name: '_exact',
      type: { struct: texts.map((c) => [c.column, c.cls === 'list' ? { list: 'varchar' } : 'varchar'] as const) },
    });
  return cols;
}

/** Every table path of the lake (of the datasets `keep` takes): each dataset's, and each mutable entity's history. */
export function lakeTables(keep: (ds: Dataset) => boolean = () => true): LakeTable[] {
  return DATASETS.filter(keep).flatMap((ds) =>
    (hasHistory(ds) ? (['data', 'history'] as TablePart[]) : (['data'] as TablePart[])).map((part) => {
      const schema = WAREHOUSE_SCHEMA[ds.schema]!;
      const name = `${ds.table.split('.')[1]!}${part === 'history' ? '_history' : ''}`;
      return {
        schema,
        name,
        path: `${schema}/${name}`,
        columns: lakeColumns(ds),
        partitions: byMonth(ds, part) ? (['chain', 'month'] as const) : (['chain'] as const),
      };
    }),
  );
}

/** Where the lake is for the statements: its root as the engine addresses it, and what the projection needs. */
export interface DdlTarget {
  /** The root: `s3://bucket/prefix` (`s3a://` for Spark), or a local folder's absolute path. */
  readonly root: string;
  /** The chains' folder names (`bsc`, or an id), for Athena's enum projection. */
  readonly chains: readonly string[];
  /** The first month Athena projects (`YYYY-MM`). */
  readonly since: string;
  /** Trino's catalog of the Hive connector. */
  readonly catalog: string;
  /**
   * DuckDB: the table paths that hold no file yet. DuckDB binds a view when it creates it, and `read_parquet` over a
   * glob that matches nothing is an error, so these become empty tables of the same columns.
   */
  readonly empty?: ReadonlySet<string>;
  /**
   * DuckDB: the S3-compatible store's endpoint (`AWS_ENDPOINT_URL_S3`, a URL) and region, when the bucket is not AWS's:
   * the secret then names them, with path-style addressing, as the exporter reaches the store.
   */
  readonly store?: { readonly endpoint: string; readonly region: string };
}

/** Backquoted identifier of Spark and Hive (Athena's DDL). */
const bq = (name: string) => `\`${name.replaceAll('`', '``')}\``;
/** A string literal of Spark SQL and Hive DDL (Athena), which read backslash escapes in literals. */
const hiveLit = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** How an engine spells types: its scalar names, a list of a type, and a struct of named fields. */
interface TypeNames {
  readonly scalar: Readonly<Record<Extract<LakeType, string>, string>>;
  readonly list: (element: string) => string;
  readonly struct: (fields: readonly (readonly [name: string, type: string])[]) => string;
}

/** Trino's Hive connector (timestamps at its default precision, milliseconds). */
const TRINO: TypeNames = {
  scalar: {
    varchar: 'varchar',
    integer: 'integer',
    bigint: 'bigint',
    boolean: 'boolean',
    double: 'double',
    decimal38: 'decimal(38,0)',
    timestamptz: 'timestamp(3)',
  },
  list: (e) => `array(${e})`,
  struct: (fs) => `row(${fs.map(([n, v]) => `${q(n)} ${v}`).join(', ')})`,
};

/** Spark SQL and Hive DDL (Athena). */
const HIVE: TypeNames = {
  scalar: {
    varchar: 'string',
    integer: 'int',
    bigint: 'bigint',
    boolean: 'boolean',
    double: 'double',
    decimal38: 'decimal(38,0)',
    timestamptz: 'timestamp',
  },
  list: (e) => `array<${e}>`,
  struct: (fs) => `struct<${fs.map(([n, v]) => `${bq(n)}:${v}`).join(',')}>`,
};

/** DuckDB. */
const DUCKDB: TypeNames = {
  scalar: {
    varchar: 'VARCHAR',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    boolean: 'BOOLEAN',
    double: 'DOUBLE',
    decimal38: 'DECIMAL(38,0)',
    timestamptz: 'TIMESTAMP WITH TIME ZONE',
  },
  list: (e) => `${e}[]`,
  struct: (fs) => `STRUCT(${fs.map(([n, v]) => `${q(n)} ${v}`).join(', ')})`,
};

/** A type as an engine spells it. */
function typeIn(names: TypeNames, t: LakeType): string {
  if (typeof t === 'string') return names.scalar[t];
  if ('list' in t) return names.list(typeIn(names, t.list));
  return names.struct(t.struct.map(([n, v]) => [n, typeIn(names, v)] as const));
}

const location = (target: DdlTarget, t: LakeTable) => `${target.root}/${t.path}`;

function duckdb(target: DdlTarget, tables: readonly LakeTable[]): string[] {
  const out: string[] = [];
  if (/^s3:\/\//.test(target.root)) {
    const store = target.store && new URL(target.store.endpoint);
    const at = store
      ? `, ENDPOINT ${lit(store.host)}, URL_STYLE 'path', USE_SSL ${store.protocol === 'https:'}, REGION ${lit(target.store!.region)}`
      : '';
    out.push(
      store
        ? `-- DuckDB with httpfs. Credentials from the AWS chain; the store at ${store.origin}, as AWS_ENDPOINT_URL_S3 names it.`
        : "-- DuckDB with httpfs. Credentials from the AWS chain; for an endpoint of your own, set AWS_ENDPOINT_URL_S3 and print these again (the secret then names it: ENDPOINT 'host:port', URL_STYLE 'path', USE_SSL false for http).",
      'INSTALL httpfs;',
      'LOAD httpfs;',
      `CREATE SECRET IF NOT EXISTS pool_export_lake (TYPE s3, PROVIDER credential_chain${at});`,
    );
  }
  for (const schema of new Set(tables.map((t) => t.schema))) out.push(`CREATE SCHEMA IF NOT EXISTS ${q(schema)};`);
  for (const t of tables) {
    if (target.empty?.has(t.path)) {
      const cols = [
        ...t.columns.map((c) => `${q(c.name)} ${typeIn(DUCKDB, c.type)}`),
        ...t.partitions.map((p) => `${q(p)} VARCHAR`),
      ];
      out.push(
        `-- ${t.path} holds no file yet: an empty table of its columns; print these statements again once it has one.`,
        `CREATE OR REPLACE TABLE ${q(t.schema)}.${q(t.name)} (${cols.join(', ')});`,
      );
      continue;
    }
    const glob = `${location(target, t)}/${t.partitions.map(() => '*/').join('')}*.parquet`;
    const hive = `{${t.partitions.map((p) => `${lit(p)}: VARCHAR`).join(', ')}}`;
    out.push(
      `CREATE OR REPLACE VIEW ${q(t.schema)}.${q(t.name)} AS SELECT * FROM read_parquet(${lit(glob)}, hive_partitioning = true, hive_types = ${hive});`,
    );
  }
  return out;
}

function trino(target: DdlTarget, tables: readonly LakeTable[]): string[] {
  const out = [
    `-- Trino, Hive connector (catalog ${target.catalog}): external tables at the lake's table paths. Timestamps are`,
    "-- timestamp(3), the connector's default precision (hive.timestamp-precision); then each table's partitions are",
    '-- registered from its folders, which a schedule repeats as months are added.',
  ];
  const cat = q(target.catalog);
  for (const schema of new Set(tables.map((t) => t.schema)))
    out.push(`CREATE SCHEMA IF NOT EXISTS ${cat}.${q(schema)};`);
  for (const t of tables) {
    const cols = [
      ...t.columns.map((c) => `${q(c.name)} ${typeIn(TRINO, c.type)}`),
      ...t.partitions.map((p) => `${q(p)} varchar`),
    ];
    out.push(
      `CREATE TABLE IF NOT EXISTS ${cat}.${q(t.schema)}.${q(t.name)} (\n  ${cols.join(',\n  ')}\n) WITH (\n  format = 'PARQUET',\n  external_location = ${lit(`${location(target, t)}/`)},\n  partitioned_by = ARRAY[${t.partitions.map(lit).join(', ')}]\n);`,
      `CALL ${cat}.system.sync_partition_metadata(${lit(t.schema)}, ${lit(t.name)}, 'FULL');`,
    );
  }
  return out;
}

function spark(target: DdlTarget, tables: readonly LakeTable[]): string[] {
  const out = ["-- Spark SQL: Parquet tables at the lake's table paths, then their partitions from the folders."];
  for (const schema of new Set(tables.map((t) => t.schema))) out.push(`CREATE DATABASE IF NOT EXISTS ${bq(schema)};`);
  for (const t of tables) {
    const cols = [
      ...t.columns.map((c) => `${bq(c.name)} ${typeIn(HIVE, c.type)}`),
      ...t.partitions.map((p) => `${bq(p)} string`),
    ];
    out.push(
      `CREATE TABLE IF NOT EXISTS ${bq(t.schema)}.${bq(t.name)} (\n  ${cols.join(',\n  ')}\n) USING parquet\nPARTITIONED BY (${t.partitions.map(bq).join(', ')})\nLOCATION ${hiveLit(location(target, t))};`,
      `MSCK REPAIR TABLE ${bq(t.schema)}.${bq(t.name)};`,
    );
  }
  return out;
}

function athena(target: DdlTarget, tables: readonly LakeTable[]): string[] {
  const out = [
    '-- Athena: external tables with partition projection, so that new months need no crawler and no MSCK REPAIR.',
    `-- Chains projected: ${target.chains.join(', ')}; months from ${target.since} to now.`,
  ];
  for (const schema of new Set(tables.map((t) => t.schema))) out.push(`CREATE DATABASE IF NOT EXISTS ${bq(schema)};`);
  for (const t of tables) {
    const props: [string, string][] = [
      ['projection.enabled', 'true'],
      ['projection.chain.type', 'enum'],
      ['projection.chain.values', target.chains.join(',')],
    ];
    if (t.partitions.includes('month'))
      props.push(
        ['projection.month.type', 'date'],
        ['projection.month.format', 'yyyy-MM'],
        ['projection.month.range', `${target.since},NOW`],
        ['projection.month.interval', '1'],
        ['projection.month.interval.unit', 'MONTHS'],
      );
    props.push([
      'storage.location.template',
      `${location(target, t)}/${t.partitions.map((p) => `${p}=\${${p}}`).join('/')}/`,
    ]);
    out.push(
      `CREATE EXTERNAL TABLE IF NOT EXISTS ${bq(t.schema)}.${bq(t.name)} (\n  ${t.columns.map((c) => `${bq(c.name)} ${typeIn(HIVE, c.type)}`).join(',\n  ')}\n)\nPARTITIONED BY (${t.partitions.map((p) => `${bq(p)} string`).join(', ')})\nSTORED AS PARQUET\nLOCATION ${hiveLit(`${location(target, t)}/`)}\nTBLPROPERTIES (\n  ${props.map(([k, v]) => `${hiveLit(k)} = ${hiveLit(v)}`).join(',\n  ')}\n);`,
    );
  }
  return out;
}

/** The statements for one engine, one per line or block, each ending in `;`. */
export function lakeDdl(engine: Engine, target: DdlTarget, tables: readonly LakeTable[] = lakeTables()): string {
  const write = { duckdb, trino, spark, athena }[engine];
  return `${write(target, tables).join('\n')}\n`;
}
