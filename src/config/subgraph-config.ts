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
import { isSubgraphNames } from '../catalog/names.ts';
import {
  checkSubgraphName,
  registerSubgraphs,
  type SubgraphDeployment,
  type SubgraphSpec,
  setSubgraphAside,
} from '../catalog/subgraphs.ts';
import { UsageError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { inert } from '../util/inert.ts';
import { parseChain } from './chains.ts';
import { dataFolder } from './data-folder.ts';
import { checkUrl } from './route-config.ts';

/**
 * The subgraphs of the config file's `subgraphs` and of the data folder's list, registered into the catalog: the config
 * file's are refused at once, as the rest of the file is; the data folder's are set aside (`setAsideSubgraphs`), so
 * that no state of the folder stops a command. Returns those registered.
 */
export function registeredSubgraphs(raw: unknown, dataDir: string): SubgraphSpec[] {
  const inFile = new Set(Object.keys(isObject(raw) ? raw : {}));
  return registerSubgraphs(configuredSubgraphs(raw, dataDir), { strict: (n) => inFile.has(n) });
}

/** The subgraphs of the config file's `subgraphs` and of the data folder's list; a name in both sets the latter aside. */
export function configuredSubgraphs(raw: unknown, dataDir: string): SubgraphSpec[] {
  const out = subgraphsFromConfig(raw);
  for (const s of readFolderSubgraphs(dataDir, { lenient: true })) {
    if (out.some((c) => c.name === s.name))
      setSubgraphAside({
        name: s.name,
        error: `subgraph ${s.name} is both in the config file and added to the data folder: remove one (pool-export subgraph remove ${s.name})`,
      });
    else out.push(s);
  }
  return out;
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

/**
 * The entries of the data folder's list as they are written (none when it has none), each read back by
 * `readFolderSubgraphs`; an error naming the fix when the list cannot be read. `subgraph add` and `remove` rewrite
 * the list from these, so that an entry this version cannot read is kept, or removed, as it is.
 */
export function folderEntries(dataDir: string): unknown[] {
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
  return parsed.subgraphs;
}

/** The name of an entry of the data folder's list (`entry N` where it names none). */
export const entryName = (entry: unknown, i: number): string =>
  isObject(entry) && typeof entry.name === 'string' ? entry.name : `entry ${i + 1}`;

/**
 * The subgraphs the data folder's list holds (none when it has none). A list that cannot be read, and an entry that is
 * not a subgraph, are errors naming the fix; with `lenient` (loading the configuration, which no state of the folder
 * may stop), they are set aside instead (`setAsideSubgraphs`), and the entries that can be read are returned.
 */
export function readFolderSubgraphs(dataDir: string, opts: { readonly lenient?: boolean } = {}): SubgraphSpec[] {
  const refuse = (name: string, error: string, whole?: true): SubgraphSpec[] => {
    if (!opts.lenient) throw new UsageError(error);
    setSubgraphAside({ name, error, ...(whole ? { whole } : {}) });
    return [];
  };
  let entries: unknown[];
  try {
    entries = folderEntries(dataDir);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return refuse(dataFolder(dataDir).subgraphs, e.message, true);
  }
  return entries.flatMap((entry, i) => {
    const name = inert(entryName(entry, i));
    const ok =
      isObject(entry) &&
      typeof entry.name === 'string' &&
      typeof entry.schema === 'string' &&
      Array.isArray(entry.deployments) &&
      entry.deployments.every((d) => isObject(d) && typeof d.chainId === 'number' && typeof d.url === 'string') &&
      (entry.names === undefined || isSubgraphNames(entry.names));
    if (!ok)
      return refuse(
        name,
        `${dataFolder(dataDir).subgraphs}: ${name} is not a subgraph (a name, a schema, deployments of a chain id and a URL each, and the names of its tables and columns): pool-export subgraph remove ${name}, then add it again`,
      );
    return [{ ...(entry as unknown as SubgraphSpec) }];
  });
}

/** Replaces the data folder's list of subgraphs (atomically: a reader sees the old list or the new one). */
export function writeFolderSubgraphs(dataDir: string, specs: readonly unknown[]): void {
  const body = { version: 1, subgraphs: specs };
  mkdirSync(dataDir, { recursive: true });
  writeFileAtomic(dataFolder(dataDir).subgraphs, `${JSON.stringify(body, null, 2)}\n`);
}
