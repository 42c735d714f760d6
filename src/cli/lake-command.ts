/**
 * `pool-export lake ddl --engine duckdb|trino|spark|athena`: prints the statements that make the lake's table paths
 * tables of that engine, at the lake's URL (`lake.url`, or `--url`), or at the data folder's `lake/` for the engines
 * that read a local folder. The columns come from the catalog; for DuckDB, which cannot create a view over no file,
 * one listing of the bucket says which tables have files yet.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { subgraphOf } from '../catalog/subgraphs.ts';
import { chainFolder } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { type LakeUrl, parseLakeUrl, showLakeUrl } from '../config/lake-url.ts';
import { UsageError } from '../errors.ts';
import { viewsWithFiles } from '../lake/lake-db.ts';
import { ENGINES, type Engine, lakeDdl, lakeTables } from '../lake/lake-ddl.ts';
import { withBucket } from '../pipeline/lake-step.ts';
import { folderSources } from '../pipeline/sources.ts';
import type { CommandBody } from './command-body.ts';
import { configFor, type FolderArgs, folderOptions } from './options.ts';

interface Args extends FolderArgs {
  action?: 'ddl' | undefined;
  engine: Engine;
  url?: string | undefined;
  since?: string | undefined;
  catalog: string;
}

const MONTH_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The month Athena's projection starts at when the local lake has none: before the first DODO V2 pool. */
const FIRST_MONTH = '2020-01';

/** What a local lake holds: its chains and its first month (from the folders of its table paths). */
function localFolders(lake: string): { chains: Set<string>; first: string | undefined } {
  const chains = new Set<string>();
  let first: string | undefined;
  const dirs = (p: string, prefix: string) =>
    existsSync(p)
      ? readdirSync(p, { withFileTypes: true })
          .filter((e) => e.isDirectory() && e.name.startsWith(prefix))
          .map((e) => e.name.slice(prefix.length))
      : [];
  for (const t of lakeTables())
    for (const c of dirs(join(lake, t.path), 'chain=')) {
      chains.add(c);
      for (const month of dirs(join(lake, t.path, `chain=${c}`), 'month='))
        if (first === undefined || month < first) first = month;
    }
  return { chains, first };
}

/** The table paths of a bucket lake with at least one Parquet object: one listing of the prefix. */
async function bucketWithFiles(config: Config, url: LakeUrl): Promise<Set<string>> {
  const holding = await withBucket(
    { ...config, lake: { ...config.lake, url: showLakeUrl(url), bucket: url } },
    async (bucket) => {
      const keys = (await bucket.list()).map((o) => o.rel).filter((k) => k.endsWith('.parquet'));
      return lakeTables()
        .filter((t) => keys.some((k) => k.startsWith(`${t.path}/chain=`)))
        .map((t) => t.path);
    },
  );
  return new Set(holding);
}

/** The yargs module of the `lake` command. */
/**
 * The S3-compatible store a bucket lake is reached at, as the exporter reaches it (AWS's own variables, `bucket.ts`):
 * its endpoint and region, for DuckDB's secret; nothing for AWS itself. An endpoint that is no URL is refused.
 */
function storeOf(env: NodeJS.ProcessEnv): { store?: { endpoint: string; region: string } } {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  if (!endpoint) return {};
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol))
    throw new UsageError(
      `AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) must be an http or https URL such as http://127.0.0.1:9000, not ${JSON.stringify(endpoint)}`,
    );
  return { store: { endpoint, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1' } };
}

export const lakeCommand: CommandBody<Args> = {
  builder: (y) =>
    folderOptions(
      y
        .positional('action', {
          choices: ['ddl'] as const,
          describe: "ddl: print the CREATE statements of the lake's tables for an engine",
        })
        .option('engine', {
          choices: ENGINES,
          demandOption: 'name the engine: --engine duckdb, trino, spark or athena',
          describe: 'the engine whose statements to print',
        })
        .option('url', {
          type: 'string',
          describe: "the lake at s3://bucket/prefix (default: lake.url, else the data folder's lake/)",
        })
        .option('since', {
          type: 'string',
          describe: `athena: the first month of the projection, YYYY-MM (default: the lake's first month, else ${FIRST_MONTH})`,
        })
        .option('catalog', { type: 'string', default: 'hive', describe: "trino: the Hive connector's catalog" }),
    ),
  handler: async (a) => {
    if (a.since !== undefined && !MONTH_RE.test(a.since))
      throw new UsageError(`--since takes a month as YYYY-MM, such as 2021-02, not "${a.since}"`);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(a.catalog))
      throw new UsageError(`--catalog takes the name of a Trino catalog (letters, digits, _), not "${a.catalog}"`);
    const config = configFor(a);
    const bucket = a.url !== undefined ? parseLakeUrl(a.url, '--url') : config.lake.bucket;
    const store = bucket ? storeOf(process.env) : {};
    const local = dataFolder(resolve(config.dataDir)).lake;
    let root: string;
    if (bucket) {
      const url = showLakeUrl(bucket);
      root = a.engine === 'spark' ? url.replace(/^s3:/, 's3a:') : url;
    } else if (a.engine === 'duckdb') root = local;
    else if (a.engine === 'spark') root = `file://${local}`;
    else
      throw new UsageError(
        `${a.engine} reads the lake from object storage, and this lake is the local folder ${local}: set lake.url (or POOL_EXPORT_LAKE_URL), or give --url s3://bucket/prefix`,
      );
    // A folder of subgraphs alone: their tables and chains, none of DODO's (`pipeline/sources.ts`).
    const dodo = folderSources(config, []).dodo;
    const tables = lakeTables((ds) => dodo || subgraphOf(ds.schema) !== undefined);
    const found = localFolders(local);
    const own = dodo ? config.chains : config.subgraphs.flatMap((s) => s.deployments.map((d) => d.chainId));
    const chains = [...new Set([...own.map(chainFolder), ...found.chains])];
    // DuckDB cannot create a view over a glob that matches no file: it needs to know which table paths are empty.
    const withFiles =
      a.engine !== 'duckdb'
        ? undefined
        : bucket
          ? await bucketWithFiles(config, bucket)
          : new Set(viewsWithFiles(config.dataDir).map((v) => v.replace('.', '/')));
    const empty = withFiles && new Set(tables.map((t) => t.path).filter((p) => !withFiles.has(p)));
    process.stdout.write(
      lakeDdl(
        a.engine,
        {
          root,
          chains,
          since: a.since ?? found.first ?? FIRST_MONTH,
          catalog: a.catalog,
          ...(empty ? { empty } : {}),
          ...store,
        },
        tables,
      ),
    );
  },
};
