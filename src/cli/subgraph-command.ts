/**
 * `pool-export subgraph add|list|remove|refresh`: subgraphs of any schema, beside DODO's. `add` checks that each URL is a
 * graph-node endpoint (its `_meta`), takes the schema from `--schema FILE` or from the first endpoint's introspection
 * (`upstream/introspect-schema.ts`), and records it in the data folder (`config/subgraph-config.ts`); a plain `run`
 * then exports it with DODO's jobs, and `run --subgraphs NAME` alone.
 */
import { readFileSync } from 'node:fs';
import type { IntrospectionQuery } from 'graphql';
import type { Dataset } from '../catalog/catalog.ts';
import { describeChange, subgraphDrift } from '../catalog/subgraph-drift.ts';
import {
  checkSubgraphName,
  type SubgraphDeployment,
  type SubgraphSpec,
  specDatasets,
  subgraphModel,
} from '../catalog/subgraphs.ts';
import { chainName, chainOfNetwork, networkOf, parseChain, REGISTRY_VERSION } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { checkUrl } from '../config/route-config.ts';
import { readFolderSubgraphs, writeFolderSubgraphs } from '../config/subgraph-config.ts';
import { UsageError } from '../errors.ts';
import { parseSchemaModel, type SchemaModel, SchemaModelError } from '../schemas/entity-model.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { tableColumns } from '../store/ddl.ts';
import { emptyForReread } from '../store/lake-rebuild.ts';
import { Warehouse } from '../store/warehouse.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { deploymentFiles, IpfsUnavailable } from '../upstream/deployment-source.ts';
import { INTROSPECTION_QUERY, sdlFromIntrospection } from '../upstream/introspect-schema.ts';
import { urlEndpoint } from '../upstream/routes.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './commands.ts';
import { configFor, type FolderArgs, folderOptions, list } from './options.ts';

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

/** A deployment of a subgraph as its endpoint answered `_meta`: its head, and its id (its manifest's IPFS hash). */
interface Answered extends SubgraphDeployment {
  readonly block: number;
  readonly deployment: string | undefined;
}

/** Asks a URL for `_meta` as graph-node answers it; a usage error that names the URL when it does not. */
async function checkGraphNode(client: UpstreamClient, d: SubgraphDeployment): Promise<Answered> {
  const e = urlEndpoint(d.url);
  let block: unknown;
  let deployment: unknown;
  try {
    const a = await client.request<{ _meta?: { block?: { number?: unknown }; deployment?: unknown } }>(
      e,
      'query Meta { _meta { block { number } deployment } }',
      {},
    );
    block = a.data?._meta?.block?.number;
    deployment = a.data?._meta?.deployment;
  } catch (e2) {
    throw new UsageError(
      `${e.label} is not a graph-node endpoint (${(e2 as Error).message.split('\n')[0]!.replace(` from ${e.label}`, '')}): give the URL of a subgraph's GraphQL endpoint, such as http://host:8000/subgraphs/name/NAME`,
    );
  }
  if (typeof block !== 'number')
    throw new UsageError(
      `${e.label} is not a graph-node endpoint: its answer has no _meta { block { number } }; give the URL of a subgraph's GraphQL endpoint, such as http://host:8000/subgraphs/name/NAME`,
    );
  return { ...d, block, deployment: typeof deployment === 'string' && deployment ? deployment : undefined };
}

/**
 * The schema of a subgraph's deployments from their own files on IPFS, each deployment's manifest checked to index the
 * chain it was given for; undefined (with a line on stderr saying what introspection cannot see) when the IPFS
 * endpoint does not answer, unless `--ipfs` named it: then that is an error.
 */
async function deploymentSchema(a: Args, config: Config, deps: readonly Answered[]): Promise<string | undefined> {
  const ipfs = a.ipfs === undefined ? config.ipfsUrl : checkUrl('--ipfs', a.ipfs);
  let schema: string | undefined;
  try {
    for (const d of deps) {
      if (!d.deployment) throw new IpfsUnavailable(`${urlEndpoint(d.url).label} names no deployment in its _meta`);
      const files = await deploymentFiles(ipfs, d.deployment, a.timeout * 1000);
      const known = files.networks.map(chainOfNetwork).filter((c): c is number => c !== undefined);
      const given = `${networkOf(d.chainId) ?? chainName(d.chainId)} (chain ${d.chainId})`;
      if (known.length && !known.includes(d.chainId))
        throw new UsageError(
          `--chain ${chainName(d.chainId)} with ${urlEndpoint(d.url).label}: its deployment ${d.deployment} indexes ${inert(files.networks.join(', '))} (chain ${known[0]}), not ${given}; give --chain ${chainName(known[0]!)}`,
        );
      if (!known.length)
        process.stderr.write(
          `${urlEndpoint(d.url).label}: its deployment indexes ${inert(files.networks.join(', '))}, a network The Graph's networks registry ${REGISTRY_VERSION} does not name; taken as ${given}, as --chain says\n`,
        );
      schema ??= files.schema;
    }
    return schema;
  } catch (e) {
    if (!(e instanceof IpfsUnavailable)) throw e;
    if (a.ipfs !== undefined) throw new UsageError(`${e.message}: check --ipfs, or give --schema FILE`);
    process.stderr.write(
      `schema by introspection: ${e.message}; introspection does not show which entities are immutable, timeseries or aggregations (--ipfs URL or --schema FILE gives them)\n`,
    );
    return undefined;
  }
}

/**
 * The schema text of a subgraph: `--schema FILE`, or its deployments' own (from IPFS), or the first deployment's
 * introspection when no IPFS endpoint answers.
 */
async function schemaText(args: {
  readonly a: Args;
  readonly config: Config;
  readonly client: UpstreamClient;
  readonly deps: readonly Answered[];
}): Promise<string> {
  const { a, config, client, deps } = args;
  if (a.schema) {
    let text: string;
    try {
      text = readFileSync(a.schema, 'utf8');
    } catch (e) {
      throw new UsageError(`--schema: cannot read ${a.schema} (${(e as Error).message})`);
    }
    // A file that is not a schema is named with the place in it that is wrong.
    try {
      parseSchemaModel(a.name ?? 'the subgraph', text);
    } catch (e) {
      if (e instanceof SchemaModelError) throw new UsageError(`--schema ${a.schema}: ${e.message}`);
      throw e;
    }
    return text;
  }
  const own = await deploymentSchema(a, config, deps);
  if (own !== undefined) return own;
  const url = deps[0]!.url;
  const answer = await client.request<IntrospectionQuery>(urlEndpoint(url), INTROSPECTION_QUERY, {});
  if (!answer.data?.__schema)
    throw new UsageError(`${urlEndpoint(url).label} answers no introspection: pass --schema FILE`);
  return sdlFromIntrospection(answer.data);
}

async function add(a: Args, config: Config): Promise<void> {
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
  const folder = readFolderSubgraphs(config.dataDir);
  if (folder.some((s) => s.name === name) || config.subgraphs.some((s) => s.name === name))
    throw new UsageError(`subgraph ${name} is already added: pool-export subgraph remove ${name}, then add it again`);
  const client = UpstreamClient.forConfig(config, { timeoutMs: a.timeout * 1000 });
  const answered: Answered[] = [];
  for (const d of deployments) answered.push(await checkGraphNode(client, d));
  const heads = answered.map((d) => d.block);
  const schema = await schemaText({ a, config, client, deps: answered });
  const entities = list(a.entities);
  const recorded = deployments.map((d, i) => withHash(d, answered[i]!.deployment));
  const spec: SubgraphSpec = {
    name,
    deployments: recorded,
    schema,
    ...(entities?.length ? { entities } : {}),
    ...(types ? { types } : {}),
  };
  const model = subgraphModel(spec);
  writeFolderSubgraphs(config.dataDir, [...folder, spec]);
  const taken = entities ?? [...model.entities, ...(model.aggregations ?? [])].map((e) => e.name);
  process.stdout.write(
    [
      `added subgraph ${name}: ${taken.length} entities (${taken.join(', ')}), ${datasetCount(spec, model)}`,
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

function show(config: Config): void {
  const folder = new Set(readFolderSubgraphs(config.dataDir).map((s) => s.name));
  if (config.subgraphs.length === 0) {
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

function remove(a: Args, config: Config): void {
  const name = a.name ?? '';
  const folder = readFolderSubgraphs(config.dataDir);
  if (!folder.some((s) => s.name === name)) {
    const inConfig = config.subgraphs.some((s) => s.name === name);
    throw new UsageError(
      inConfig
        ? `subgraph ${name} comes from the config file: take it out there`
        : `no subgraph ${name} is added; pool-export subgraph list shows them`,
    );
  }
  writeFolderSubgraphs(
    config.dataDir,
    folder.filter((s) => s.name !== name),
  );
  process.stdout.write(
    `removed subgraph ${name}: runs no longer read it; its tables stay in the warehouse and the lake (schema ${name})\n`,
  );
}

/** A deployment with the hash its endpoint answered (kept as it was when the endpoint names none). */
function withHash(d: SubgraphDeployment, hash: string | undefined): SubgraphDeployment {
  return hash ? { ...d, deployment: hash } : d;
}

/**
 * Takes the schema a subgraph's endpoint serves now (or `--schema FILE`) in place of the one it was added with, and
 * readies the data folder for it: the tables gain the new fields' columns, and every dataset whose columns (or paging)
 * changed is emptied and read again whole by the next run, its lake files then rewritten with the new columns (the
 * lake serves the old rows until then). A field whose new type needs another column type is refused, naming the fix.
 */
async function refresh(a: Args, config: Config): Promise<void> {
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
  const now: SubgraphSpec = {
    ...was,
    deployments: was.deployments.map((d, i) => withHash(d, answered[i]!.deployment)),
    schema: await schemaText({ a, config, client, deps: answered }),
    ...(types ? { types } : {}),
  };
  const [before, after] = [subgraphModel(was), subgraphModel(now)];
  const changes = subgraphDrift(before, after);
  // A new deployment (another hash than the one recorded) may have changed any row: every dataset on its chain is read
  // again whole. A hash seen for the first time (a folder added before hashes were kept) is recorded.
  const moved = now.deployments.filter((d, i) => {
    const old = was.deployments[i]!.deployment;
    return old !== undefined && d.deployment !== undefined && d.deployment !== old;
  });
  const learned = now.deployments.some((d, i) => d.deployment !== was.deployments[i]!.deployment);
  const retyped = JSON.stringify(now.types ?? {}) !== JSON.stringify(was.types ?? {});
  if (!changes.length && !learned && !retyped) {
    process.stdout.write(`subgraph ${name}: its schema is unchanged\n`);
    return;
  }
  const oldSets = new Map(specDatasets(was, before).map((d) => [d.name, d]));
  // The shape the new schema gives under the old types: a column `--type` retypes is cast in place from its exact text
  // (`store/warehouse.ts`, `retypeColumns`), not read again.
  const newSets = specDatasets({ ...now, ...(was.types ? { types: was.types } : { types: {} }) }, after);
  // Read again whole: a dataset whose columns changed, or whose paging did (an entity found immutable or not).
  const shape = (d: Dataset) => JSON.stringify([tableColumns(d), d.kind, d.seq, d.idType, d.aggregation]);
  const changed = newSets.filter((d) => {
    const o = oldSets.get(d.name);
    return !o || shape(o) !== shape(d);
  });
  // A column keeps its type: a field whose new type needs another one cannot be taken in place.
  for (const d of changed) {
    const types = new Map(tableColumns(oldSets.get(d.name) ?? d));
    for (const [column, type] of tableColumns(d))
      if (types.has(column) && types.get(column) !== type)
        throw new UsageError(
          `subgraph ${name}: ${d.name}.${column} would change type (${types.get(column)} → ${type}) as its field's type changed upstream; a column cannot change type in place: pool-export subgraph remove ${name}, drop its schema (pool-export shell: DROP SCHEMA ${name} CASCADE), then add it again`,
        );
  }
  const lock = await lockDataDir(config.dataDir, { what: 'subgraph refresh', waitSecs: 0, onLost: () => undefined });
  try {
    const w = await Warehouse.open(config.dataDir);
    try {
      await w.ensureTables(newSets);
      await w.transaction(async (tx) => {
        // Read again whole from an empty table: a row the new deployment no longer has does not linger.
        for (const { chainId } of moved)
          for (const d of newSets.filter((x) => !changed.includes(x))) await emptyForReread(tx, d, chainId);
        for (const d of changed) await emptyForReread(tx, d);
      });
    } finally {
      await w.close();
    }
    writeFolderSubgraphs(
      config.dataDir,
      folder.map((s) => (s.name === name ? now : s)),
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
      ...(changed.length
        ? [`emptied, to be read again whole by the next run: ${changed.map((d) => d.name).join(', ')}`]
        : []),
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
          'Entity.field=TYPE: a field stored as another SQL type than its default (repeat; e.g. Pool.sqrtPrice=DOUBLE; docs/exporting.md lists them); refresh: replaces the list',
      })
      .option('timeout', { type: 'number', default: 30, describe: 'seconds each request may take' }),
  handler: async (a) => {
    const config = configFor(a);
    if (a.action === 'list') return show(config);
    if (!a.name) throw new UsageError(`subgraph ${a.action} needs the subgraph's name`);
    if (a.action === 'add') return add(a, config);
    if (a.action === 'refresh') return refresh(a, config);
    return remove(a, config);
  },
};
