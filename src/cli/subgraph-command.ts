/**
 * `pool-export subgraph add|list|remove`: subgraphs of any schema, beside DODO's. `add` checks that each URL is a
 * graph-node endpoint (its `_meta`), takes the schema from `--schema FILE` or from the first endpoint's introspection
 * (`upstream/introspect-schema.ts`), and records it in the data folder (`config/subgraph-config.ts`); a plain `run`
 * then exports it with DODO's jobs, and `run --subgraphs NAME` alone.
 */
import { readFileSync } from 'node:fs';
import type { IntrospectionQuery } from 'graphql';
import { checkSubgraphName, type SubgraphDeployment, type SubgraphSpec, subgraphModel } from '../catalog/subgraphs.ts';
import { chainName, parseChain } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { checkUrl } from '../config/route-config.ts';
import { readFolderSubgraphs, writeFolderSubgraphs } from '../config/subgraph-config.ts';
import { UsageError } from '../errors.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { INTROSPECTION_QUERY, sdlFromIntrospection } from '../upstream/introspect-schema.ts';
import { urlEndpoint } from '../upstream/routes.ts';
import type { CommandBody } from './commands.ts';
import { configFor, type FolderArgs, folderOptions, list } from './options.ts';

interface Args extends FolderArgs {
  action: 'add' | 'list' | 'remove';
  name?: string | undefined;
  chain?: string[] | undefined;
  url?: string[] | undefined;
  schema?: string | undefined;
  entities?: string | undefined;
  timeout: number;
}

/** Asks a URL for `_meta` as graph-node answers it; a usage error that names the URL when it does not. */
async function checkGraphNode(client: UpstreamClient, url: string): Promise<number> {
  const e = urlEndpoint(url);
  let block: unknown;
  try {
    const a = await client.request<{ _meta?: { block?: { number?: unknown } } }>(
      e,
      'query Meta { _meta { block { number } deployment } }',
      {},
    );
    block = a.data?._meta?.block?.number;
  } catch (e2) {
    throw new UsageError(
      `${e.label} is not a graph-node endpoint (${(e2 as Error).message.split('\n')[0]!.replace(` from ${e.label}`, '')}): give the URL of a subgraph's GraphQL endpoint, such as http://host:8000/subgraphs/name/NAME`,
    );
  }
  if (typeof block !== 'number')
    throw new UsageError(
      `${e.label} is not a graph-node endpoint: its answer has no _meta { block { number } }; give the URL of a subgraph's GraphQL endpoint, such as http://host:8000/subgraphs/name/NAME`,
    );
  return block;
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
  const dup = deployments.find((d, i) => deployments.findIndex((x) => x.chainId === d.chainId) !== i);
  if (dup) throw new UsageError(`--chain ${chainName(dup.chainId)} is given twice: one deployment per chain`);
  const folder = readFolderSubgraphs(config.dataDir);
  if (folder.some((s) => s.name === name) || config.subgraphs.some((s) => s.name === name))
    throw new UsageError(`subgraph ${name} is already added: pool-export subgraph remove ${name}, then add it again`);
  const client = UpstreamClient.forConfig(config, { timeoutMs: a.timeout * 1000 });
  const heads: number[] = [];
  for (const d of deployments) heads.push(await checkGraphNode(client, d.url));
  let schema: string;
  if (a.schema) {
    try {
      schema = readFileSync(a.schema, 'utf8');
    } catch (e) {
      throw new UsageError(`--schema: cannot read ${a.schema} (${(e as Error).message})`);
    }
  } else {
    const answer = await client.request<IntrospectionQuery>(urlEndpoint(deployments[0]!.url), INTROSPECTION_QUERY, {});
    if (!answer.data?.__schema)
      throw new UsageError(`${urlEndpoint(deployments[0]!.url).label} answers no introspection: pass --schema FILE`);
    schema = sdlFromIntrospection(answer.data);
  }
  const entities = list(a.entities);
  const spec: SubgraphSpec = { name, deployments, schema, ...(entities?.length ? { entities } : {}) };
  const model = subgraphModel(spec);
  writeFolderSubgraphs(config.dataDir, [...folder, spec]);
  const taken = entities ?? model.entities.map((e) => e.name);
  process.stdout.write(
    [
      `added subgraph ${name}: ${taken.length} entities (${taken.join(', ')})`,
      ...deployments.map((d, i) => `  ${chainName(d.chainId)}: ${urlEndpoint(d.url).label} (block ${heads[i]})`),
      `export it: pool-export run --subgraphs ${name}   (a plain run takes it too, with DODO's jobs)`,
      '',
    ].join('\n'),
  );
}

function show(config: Config): void {
  const folder = new Set(readFolderSubgraphs(config.dataDir).map((s) => s.name));
  if (config.subgraphs.length === 0) {
    process.stdout.write('no subgraph is added: pool-export subgraph add NAME --chain CHAIN --url URL\n');
    return;
  }
  for (const s of config.subgraphs) {
    const model = subgraphModel(s);
    const n = s.entities?.length ?? model.entities.length;
    process.stdout.write(
      `${s.name}: ${n} entities, from ${folder.has(s.name) ? 'the data folder' : 'the config file'}\n${s.deployments
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

/** The yargs module of the `subgraph` command. */
export const subgraphCommand: CommandBody<Args> = {
  builder: (y) =>
    folderOptions(y)
      .positional('action', { choices: ['add', 'list', 'remove'] as const, demandOption: true })
      .positional('name', { type: 'string', describe: 'the subgraph: its warehouse schema, e.g. uniswap_v2' })
      .option('chain', { type: 'string', array: true, describe: 'a chain of a deployment (repeat, with --url)' })
      .option('url', { type: 'string', array: true, describe: "that chain's graph-node endpoint (repeat)" })
      .option('schema', { type: 'string', describe: 'its schema.graphql (default: read by introspection)' })
      .option('entities', { type: 'string', describe: 'comma list of entities to export (default: every one)' })
      .option('timeout', { type: 'number', default: 30, describe: 'seconds each request may take' }),
  handler: async (a) => {
    const config = configFor(a);
    if (a.action === 'list') return show(config);
    if (!a.name) throw new UsageError(`subgraph ${a.action} needs the subgraph's name`);
    if (a.action === 'add') return add(a, config);
    return remove(a, config);
  },
};
