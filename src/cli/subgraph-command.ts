/**
 * `pool-export subgraph add|list|remove|refresh`: subgraphs of any schema, beside DODO's. `add` checks that each URL is a
 * graph-node endpoint (its `_meta`), takes the schema from `--schema FILE` or from the first endpoint's introspection
 * (`upstream/introspect-schema.ts`), and records it in the data folder (`config/subgraph-config.ts`); a plain `run`
 * then exports it with DODO's jobs, and `run --subgraphs NAME` alone.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { decideNames, type NameChange } from '../catalog/names.ts';
import { describeChange } from '../catalog/subgraph-drift.ts';
import {
  asideSubject,
  checkSubgraphName,
  SUBGRAPH_NAME,
  type SubgraphDeployment,
  type SubgraphSpec,
  setAsideSubgraphs,
  specDatasets,
  subgraphModel,
} from '../catalog/subgraphs.ts';
import { chainName, parseChain } from '../config/chains.ts';
import { type Config, trackedSettings } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { checkUrl } from '../config/route-config.ts';
import { entryName, folderEntries, readFolderSubgraphs, writeFolderSubgraphs } from '../config/subgraph-config.ts';
import { UsageError } from '../errors.ts';
import { writeViewsFile } from '../reports/views.ts';
import type { SchemaModel } from '../schemas/entity-model.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { dropSubgraphData, emptyForReread } from '../store/lake-rebuild.ts';
import { planRefresh } from '../store/subgraph-refresh.ts';
import { Warehouse } from '../store/warehouse.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { urlEndpoint } from '../upstream/routes.ts';
import {
  type Answered,
  checkGraphNode,
  type SchemaSource,
  schemaText,
  withUnserved,
} from '../upstream/subgraph-schema.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './command-body.ts';
import { configFor, type FolderArgs, folderOptions, list } from './options.ts';
import { StopRequests } from './stop.ts';

interface Args extends FolderArgs {
  action: 'add' | 'list' | 'remove' | 'refresh';
  name?: string | undefined;
  chain?: string[] | undefined;
  url?: string[] | undefined;
  schema?: string | undefined;
  entities?: string | undefined;
  type?: string[] | undefined;
  ipfs?: string | undefined;
  timeout: number;
  drop: boolean;
}

/** `--type Entity.field=TYPE` (repeated) as a subgraph's `types`; undefined when none is given. */
function typesOf(a: Pick<Args, 'type'>): Record<string, string> | undefined {
  if (!a.type?.length) return undefined;
  const types: Record<string, string> = {};
  for (const t of a.type) {
    const at = t.indexOf('=');
    if (at < 1) throw new UsageError(`--type "${t}" must be Entity.field=TYPE, e.g. --type Pool.sqrtPrice=DOUBLE`);
    types[t.slice(0, at).trim()] = t.slice(at + 1).trim();
  }
  return types;
}

/** Where `add` and `refresh` read the schema (`upstream/subgraph-schema.ts`). */
function sourceOf(at: {
  a: Args;
  config: Config;
  client: UpstreamClient;
  deps: readonly Answered[];
  signal: AbortSignal;
  history: Map<string, number>;
}): SchemaSource {
  const { a, config } = at;
  return {
    name: a.name ?? 'the subgraph',
    file: a.schema,
    ipfs:
      a.ipfs === undefined ? { url: config.ipfsUrl, named: false } : { url: checkUrl('--ipfs', a.ipfs), named: true },
    client: at.client,
    deps: at.deps,
    timeoutMs: a.timeout * 1000,
    signal: at.signal,
    history: at.history,
    note: (line) => process.stderr.write(`${line}\n`),
  };
}

async function add(a: Args, config: Config, signal: AbortSignal): Promise<void> {
  const name = a.name ?? '';
  checkSubgraphName(name);
  const chains = a.chain ?? [];
  const urls = a.url ?? [];
  if (chains.length === 0 || chains.length !== urls.length)
    throw new UsageError(
      `subgraph add takes one --url per --chain, in the same order (got ${chains.length} --chain and ${urls.length} --url): e.g. --chain ethereum --url http://host:8000/subgraphs/name/NAME`,
    );
  const deployments: SubgraphDeployment[] = chains.map((c, i) => ({
    chainId: parseChain(c),
    url: checkUrl(`--url ${i + 1}`, urls[i]!),
  }));
  // Before any request: a malformed --type is refused at once (each entry is checked against the schema below).
  const types = typesOf(a);
  const dup = deployments.find((d, i) => deployments.findIndex((x) => x.chainId === d.chainId) !== i);
  if (dup) throw new UsageError(`--chain ${chainName(dup.chainId)} is given twice: one deployment per chain`);
  const entries = folderEntries(config.dataDir);
  if (entries.some((e, i) => entryName(e, i) === name) || config.subgraphs.some((s) => s.name === name))
    throw new UsageError(`subgraph ${name} is already added: pool-export subgraph remove ${name}, then add it again`);
  const client = UpstreamClient.forConfig(config, { timeoutMs: a.timeout * 1000 });
  const answered: Answered[] = [];
  for (const d of deployments) answered.push(await checkGraphNode(client, d));
  const heads = answered.map((d) => d.block);
  const history = new Map<string, number>();
  const schema = await schemaText(sourceOf({ a, config, client, deps: answered, signal, history }));
  const entities = list(a.entities);
  const recorded = deployments.map((d, i) => withHash(d, answered[i]!.deployment, history));
  const given: SubgraphSpec = {
    name,
    deployments: recorded,
    schema,
    ...(entities?.length ? { entities } : {}),
    ...(types ? { types } : {}),
  };
  const model = subgraphModel(given);
  const taken = entities ?? [...model.entities, ...(model.aggregations ?? [])].map((e) => e.name);
  // What each deployment serves: a schema it serves none of is refused, what it lacks is not read there.
  const served = await withUnserved(client, recorded, { types: taken, name, file: a.schema });
  // The names of its tables and columns are decided now, and kept from then on.
  const { names, changes } = decideNames(model);
  const spec: SubgraphSpec = { ...given, deployments: served.deployments, names };
  writeFolderSubgraphs(config.dataDir, [...entries, spec]);
  process.stdout.write(
    [
      `added subgraph ${name}: ${taken.length} entities (${taken.join(', ')}), ${datasetCount(spec, model)}`,
      ...served.lines,
      ...nameLines(changes),
      ...deployments.map((d, i) => `  ${chainName(d.chainId)}: ${urlEndpoint(d.url).label} (block ${heads[i]})`),
      `export it: pool-export run --subgraphs ${name}   (a plain run takes it too, with the folder's other sources: pool-export jobs lists them)`,
      '',
    ].join('\n'),
  );
}

/** How many datasets (tables) a subgraph's entities make: an aggregation makes one per interval. */
function datasetCount(spec: SubgraphSpec, model: SchemaModel): string {
  const n = specDatasets(spec, model).length;
  return `${n} dataset${n === 1 ? '' : 's'}`;
}

/** The names the rule had to change, a line each (none when it changed none). */
function nameLines(changes: readonly NameChange[]): string[] {
  if (!changes.length) return [];
  return [
    `names changed to keep every table and column apart (docs/any-subgraph.md, Names):`,
    ...changes.map((c) => `  ${inert(c.what)}: ${c.given}, not ${c.wanted} (${inert(c.why)})`),
  ];
}

function show(config: Config): void {
  const folder = new Set(readFolderSubgraphs(config.dataDir, { lenient: true }).map((s) => s.name));
  for (const s of setAsideSubgraphs())
    process.stdout.write(`${s.whole ? asideSubject(s) : inert(s.name)}: set aside, not exported: ${inert(s.error)}\n`);
  if (config.subgraphs.length === 0) {
    if (setAsideSubgraphs().length) return;
    process.stdout.write('no subgraph is added: pool-export subgraph add NAME --chain CHAIN --url URL\n');
    return;
  }
  for (const s of config.subgraphs) {
    const model = subgraphModel(s);
    const n = s.entities?.length ?? model.entities.length + (model.aggregations?.length ?? 0);
    process.stdout.write(
      `${s.name}: ${n} entities, ${datasetCount(s, model)}, from ${folder.has(s.name) ? 'the data folder' : 'the config file'}\n${s.deployments
        .map((d) => `  ${chainName(d.chainId)}: ${urlEndpoint(d.url).label}\n`)
        .join('')}`,
    );
  }
}

/**
 * Takes a subgraph out of the data folder's list: runs no longer read it. Its data stays, and the lake's views keep
 * reading its files (`lake/lake-db.ts`, `orphanPaths`); with `--drop`, its warehouse schema, its rows in the exporter's
 * tables and its lake folder are deleted too (a subgraph removed before can be dropped so, by its name).
 */
async function remove(a: Args, config: Config): Promise<void> {
  const name = a.name ?? '';
  const entries = folderEntries(config.dataDir);
  const listed = entries.some((e, i) => entryName(e, i) === name);
  const lakeDir = join(dataFolder(config.dataDir).lake, name);
  if (!listed && !(a.drop && SUBGRAPH_NAME.test(name) && existsSync(lakeDir))) {
    const inConfig = config.subgraphs.some((s) => s.name === name);
    throw new UsageError(
      inConfig
        ? `subgraph ${name} comes from the config file: take it out there`
        : `no subgraph ${inert(name)} is added; pool-export subgraph list shows them`,
    );
  }
  if (a.drop) {
    // Never DODO's data, nor a name that cannot be a subgraph's.
    checkSubgraphName(name);
    const lock = await lockDataDir(config.dataDir, { what: 'subgraph remove', waitSecs: 0, onLost: () => undefined });
    try {
      const w = await Warehouse.open(config.dataDir);
      try {
        await w.transaction((tx) => dropSubgraphData(tx, name));
      } finally {
        await w.close();
      }
      rmSync(lakeDir, { recursive: true, force: true });
      if (listed)
        writeFolderSubgraphs(
          config.dataDir,
          entries.filter((e, i) => entryName(e, i) !== name),
        );
      await writeViewsFile(config.dataDir, trackedSettings(config)).catch(() => undefined);
    } finally {
      await lock.release();
    }
    process.stdout.write(
      `removed subgraph ${name} and its data: its warehouse schema and its lake folder are deleted${config.lake.bucket ? '; the next run deletes its objects from the bucket' : ''}\n`,
    );
    return;
  }
  writeFolderSubgraphs(
    config.dataDir,
    entries.filter((e, i) => entryName(e, i) !== name),
  );
  process.stdout.write(
    `removed subgraph ${name}: runs no longer read it. Its data stays: the warehouse keeps schema ${name}, and lake/${name} its files, which pool-export query and shell read as ${name}.<table>; pool-export subgraph remove ${name} --drop deletes them\n`,
  );
}

/**
 * A deployment with the hash its endpoint answered (kept as it was when the endpoint names none), and the history its
 * manifest keeps where it was read (`history`, by URL; kept as it was when the manifest was not read: `--schema FILE`).
 */
function withHash(
  d: SubgraphDeployment,
  hash: string | undefined,
  history: ReadonlyMap<string, number>,
): SubgraphDeployment {
  const blocks = history.has(d.url) ? history.get(d.url) || undefined : d.history;
  const { history: _, ...rest } = d;
  return { ...rest, ...(hash ? { deployment: hash } : {}), ...(blocks !== undefined ? { history: blocks } : {}) };
}

/**
 * Takes the schema a subgraph's endpoint serves now (or `--schema FILE`) in place of the one it was added with, and
 * readies the data folder for it: the tables gain the new fields' columns, and every dataset whose columns (or paging)
 * changed is emptied and read again whole by the next run, its lake files then rewritten with the new columns (the
 * lake serves the old rows until then). A field whose new type needs another column type is refused, naming the fix.
 */
async function refresh(a: Args, config: Config, signal: AbortSignal): Promise<void> {
  const name = a.name ?? '';
  const folder = readFolderSubgraphs(config.dataDir);
  const was = folder.find((s) => s.name === name);
  if (!was)
    throw new UsageError(
      config.subgraphs.some((s) => s.name === name)
        ? `subgraph ${name} comes from the config file: update its schema file there`
        : `no subgraph ${name} is added; pool-export subgraph list shows them`,
    );
  const client = UpstreamClient.forConfig(config, { timeoutMs: a.timeout * 1000 });
  const answered: Answered[] = [];
  for (const d of was.deployments) answered.push(await checkGraphNode(client, d));
  const types = typesOf(a);
  const { names: _, ...rest } = was;
  const history = new Map<string, number>();
  const schema = await schemaText(sourceOf({ a, config, client, deps: answered, signal, history }));
  const model = subgraphModel({ ...rest, schema, ...(types ? { types } : {}) });
  const taken = was.entities ?? [...model.entities, ...(model.aggregations ?? [])].map((e) => e.name);
  const hashed = was.deployments.map((d, i) => withHash(d, answered[i]!.deployment, history));
  const served = await withUnserved(client, hashed, { types: taken, name, file: a.schema });
  const plan = planRefresh(was, {
    ...rest,
    deployments: served.deployments,
    schema,
    ...(types ? { types } : {}),
  });
  if (plan.unchanged) {
    process.stdout.write(`subgraph ${name}: its schema is unchanged\n`);
    return;
  }
  const { changes, moved, datasets, reread, retyped, spec: now } = plan;
  const lock = await lockDataDir(config.dataDir, { what: 'subgraph refresh', waitSecs: 0, onLost: () => undefined });
  try {
    const w = await Warehouse.open(config.dataDir);
    try {
      await w.ensureTables(datasets);
      await w.transaction(async (tx) => {
        // Read again whole from an empty table: a row the new deployment no longer has does not linger.
        for (const { chainId } of moved)
          for (const d of datasets.filter((x) => !reread.includes(x))) await emptyForReread(tx, d, chainId);
        for (const d of reread) await emptyForReread(tx, d);
      });
    } finally {
      await w.close();
    }
    writeFolderSubgraphs(
      config.dataDir,
      folderEntries(config.dataDir).map((e, i) => (entryName(e, i) === name ? now : e)),
    );
  } finally {
    await lock.release();
  }
  process.stdout.write(
    [
      changes.length
        ? `subgraph ${name}: ${changes.length} change(s) taken`
        : `subgraph ${name}: its schema is unchanged`,
      ...changes.map((c) => `  ${inert(describeChange(c))}`),
      ...(retyped
        ? [
            `types: ${
              Object.entries(now.types ?? {})
                .map(([k, t]) => `${k} ${t}`)
                .join(', ') || 'the defaults'
            }; the next run casts the columns from their exact texts (nothing is read again)`,
          ]
        : []),
      ...(reread.length
        ? [`emptied, to be read again whole by the next run: ${reread.map((d) => d.name).join(', ')}`]
        : []),
      ...served.lines,
      ...nameLines(plan.names),
      ...moved.map(
        (d) =>
          `a new deployment on ${chainName(d.chainId)} (${d.deployment}, was ${was.deployments.find((x) => x.chainId === d.chainId)!.deployment}): as a new version may have changed any row, every dataset there is read again whole by the next run`,
      ),
      '',
    ].join('\n'),
  );
}

/** The yargs module of the `subgraph` command. */
export const subgraphCommand: CommandBody<Args> = {
  builder: (y) =>
    folderOptions(y)
      .positional('action', { choices: ['add', 'list', 'remove', 'refresh'] as const, demandOption: true })
      .positional('name', { type: 'string', describe: 'the subgraph: its warehouse schema, e.g. uniswap_v2' })
      .option('chain', { type: 'string', array: true, describe: 'a chain of a deployment (repeat, with --url)' })
      .option('url', { type: 'string', array: true, describe: "that chain's graph-node endpoint (repeat)" })
      .option('schema', {
        type: 'string',
        describe:
          "its schema.graphql (default: the deployment's own, from IPFS; by introspection when IPFS does not answer); refresh: the new one",
      })
      .option('ipfs', {
        type: 'string',
        describe:
          "the IPFS endpoint that holds the deployment's manifest and schema (default: ipfsUrl in the config file, POOL_EXPORT_IPFS_URL, or The Graph's)",
      })
      .option('entities', { type: 'string', describe: 'comma list of entities to export (default: every one)' })
      .option('type', {
        type: 'string',
        array: true,
        describe:
          'Entity.field=TYPE: a field stored as another SQL type than its default (repeat; e.g. Pool.sqrtPrice=DOUBLE; docs/any-subgraph.md lists them); refresh: replaces the list',
      })
      .option('timeout', { type: 'number', default: 30, describe: 'seconds each request may take' })
      .option('drop', {
        type: 'boolean',
        default: false,
        describe: 'remove: delete its data too (its warehouse schema and its lake folder)',
      }),
  handler: async (a) => {
    const config = configFor(a);
    if (a.action === 'list') return show(config);
    if (!a.name) throw new UsageError(`subgraph ${a.action} needs the subgraph's name`);
    if (a.action === 'remove') return remove(a, config);
    // A stop request ends the reading of the schema at once; the process then ends by its signal, having written nothing.
    const stops = new StopRequests((sig) => process.stderr.write(`${sig}: stopping; nothing is written\n`));
    try {
      await (a.action === 'add' ? add(a, config, stops.signal) : refresh(a, config, stops.signal));
    } catch (e) {
      if (!stops.by) throw e;
    } finally {
      stops.end();
    }
  },
};
