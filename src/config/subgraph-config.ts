/**
 * Where subgraphs of any schema are configured: `subgraphs` in the config file, and the data folder's own list, which
 * `pool-export subgraph add` and `remove` write (its schema text kept in it, so that a run needs no file beside it).
 *
 * Config file:
 * ```json
 * "subgraphs": { "uniswap_v2": { "deployments": { "ethereum": "http://…/subgraphs/name/uniswap-v2" },
 *                                "schema": "schemas/uniswap-v2.graphql", "entities": ["Pair", "Swap"] } }
 * ```
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { checkSubgraphName, type SubgraphDeployment, type SubgraphSpec } from '../catalog/subgraphs.ts';
import { UsageError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { parseChain } from './chains.ts';
import { dataFolder } from './data-folder.ts';
import { checkUrl } from './route-config.ts';

/** The subgraphs of the config file's `subgraphs` and of the data folder's list; a name in both is an error. */
export function configuredSubgraphs(raw: unknown, dataDir: string): SubgraphSpec[] {
  const out = subgraphsFromConfig(raw);
  for (const s of readFolderSubgraphs(dataDir)) {
    if (out.some((c) => c.name === s.name))
      throw new UsageError(
        `subgraph ${s.name} is both in the config file and added to the data folder: remove one (pool-export subgraph remove ${s.name})`,
      );
    out.push(s);
  }
  return out;
}

/** The data folder's list of subgraphs, as `subgraph add` writes it. */
interface FolderFile {
  readonly version: 1;
  readonly subgraphs: readonly SubgraphSpec[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The subgraphs of the config file's `subgraphs` object, their schema files read. */
export function subgraphsFromConfig(raw: unknown): SubgraphSpec[] {
  if (raw === undefined) return [];
  const example =
    '{"uniswap_v2": {"deployments": {"ethereum": "https://…/subgraphs/name/…"}, "schema": "uniswap-v2.graphql"}}';
  if (!isObject(raw)) throw new UsageError(`config "subgraphs" must be an object like ${example}`);
  return Object.entries(raw).map(([name, v]): SubgraphSpec => {
    checkSubgraphName(name);
    if (!isObject(v) || !isObject(v.deployments) || typeof v.schema !== 'string')
      throw new UsageError(`config subgraphs.${name} must be an object like ${example}`);
    const deployments = Object.entries(v.deployments).map(
      ([chain, url]): SubgraphDeployment => ({
        chainId: parseChain(chain),
        url: checkUrl(`config subgraphs.${name}.deployments.${chain}`, String(url)),
      }),
    );
    if (deployments.length === 0) throw new UsageError(`config subgraphs.${name} names no deployment`);
    let schema: string;
    try {
      schema = readFileSync(v.schema, 'utf8');
    } catch (e) {
      throw new UsageError(
        `config subgraphs.${name}.schema: cannot read ${v.schema} (${(e as Error).message}); give the path of its schema.graphql, relative to the working directory`,
      );
    }
    const entities = v.entities;
    if (entities !== undefined && (!Array.isArray(entities) || !entities.every((e) => typeof e === 'string')))
      throw new UsageError(`config subgraphs.${name}.entities must be a list of entity names`);
    const types = v.types;
    if (types !== undefined && (!isObject(types) || !Object.values(types).every((t) => typeof t === 'string')))
      throw new UsageError(
        `config subgraphs.${name}.types must map Entity.field to an SQL type, e.g. {"Pool.sqrtPrice": "DOUBLE"}`,
      );
    return {
      name,
      deployments,
      schema,
      ...(entities?.length ? { entities: entities as string[] } : {}),
      ...(types && Object.keys(types).length ? { types: types as Record<string, string> } : {}),
    };
  });
}

/** A key in a deployment URL's path (a gateway's `/api/<key>/subgraphs/id/…`), to be kept out of every message. */
export function urlSecrets(specs: readonly SubgraphSpec[]): string[] {
  return specs.flatMap((s) => s.deployments.map((d) => /\/api\/([^/]+)\//.exec(d.url)?.[1] ?? '')).filter(Boolean);
}

/** The subgraphs the data folder's list holds (none when it has none). */
export function readFolderSubgraphs(dataDir: string): SubgraphSpec[] {
  const file = dataFolder(dataDir).subgraphs;
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `${file} is not valid JSON (${(e as Error).message}): restore it, or remove it and add the subgraphs again`,
    );
  }
  if (!isObject(parsed) || parsed.version !== 1 || !Array.isArray(parsed.subgraphs))
    throw new UsageError(`${file} is not a list of subgraphs this version reads: remove it and add them again`);
  return (parsed as unknown as FolderFile).subgraphs.map((s) => ({ ...s }));
}

/** Replaces the data folder's list of subgraphs (atomically: a reader sees the old list or the new one). */
export function writeFolderSubgraphs(dataDir: string, specs: readonly SubgraphSpec[]): void {
  const body: FolderFile = { version: 1, subgraphs: specs };
  mkdirSync(dataDir, { recursive: true });
  writeFileAtomic(dataFolder(dataDir).subgraphs, `${JSON.stringify(body, null, 2)}\n`);
}
