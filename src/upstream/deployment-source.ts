/**
 * A deployment's own files: its manifest (`subgraph.yaml`) and its `schema.graphql`, read from IPFS by the deployment
 * id its endpoint answers (`_meta { deployment }`), as graph-node itself reads them. The schema keeps what graph-node's
 * introspection drops: `@entity(immutable: true)`, `timeseries`, `@aggregation` and their intervals; the manifest names
 * the network each data source indexes. Read through the Kubo RPC API's `cat` (`POST <ipfs>/api/v0/cat?arg=HASH`, an
 * empty body: graph-node's `graph/src/ipfs/rpc_client.rs` at 90e949d), which The Graph's IPFS endpoint serves.
 */
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../errors.ts';
import { bytesText, readText } from '../util/http-body.ts';
import { inert } from '../util/inert.ts';

/** Bytes a manifest or a schema may take: the largest real schemas are a few hundred kilobytes. */
const FILE_BUDGET = 8 * 1024 ** 2;

/** An IPFS endpoint that could not give a file: unreachable, too slow, or without it. */
export class IpfsUnavailable extends Error {}

/** What a deployment's files say. */
export interface DeploymentFiles {
  /** The deployment id (the manifest's hash). */
  readonly deployment: string;
  /** The text of its `schema.graphql`. */
  readonly schema: string;
  /** The networks its data sources and templates index (`mainnet`, `bsc`, …). */
  readonly networks: readonly string[];
}

/** One file of an IPFS endpoint, within the time and byte budgets. */
export async function ipfsCat(ipfs: string, hash: string, timeoutMs: number): Promise<string> {
  const url = `${ipfs.replace(/\/*$/, '/')}api/v0/cat?arg=${encodeURIComponent(hash)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-length': '0' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    // fetch's own message is "fetch failed"; what failed is its cause (ECONNREFUSED, a name not found, …).
    const cause = ((e as Error).cause as Error | undefined)?.message;
    const why =
      (e as Error).name === 'TimeoutError' ? `no answer in ${timeoutMs / 1000} s` : (cause ?? (e as Error).message);
    throw new IpfsUnavailable(`the IPFS endpoint ${ipfs} could not give ${hash} (${why})`, { cause: e });
  }
  if (!res.ok) {
    const body = await readText(res, 4096, { truncate: true }).catch(() => '');
    throw new IpfsUnavailable(
      `the IPFS endpoint ${ipfs} could not give ${hash} (HTTP ${res.status}: ${inert(body.trim().slice(0, 200))})`,
    );
  }
  try {
    return await readText(res, FILE_BUDGET);
  } catch {
    throw new UsageError(`${hash} from ${ipfs} is larger than ${bytesText(FILE_BUDGET)}: it is no subgraph's file`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The link of a manifest's file entry (`file: { /: /ipfs/HASH }`): its hash. */
function linked(file: unknown): string | undefined {
  const link = isObject(file) ? file['/'] : undefined;
  return typeof link === 'string' && /^\/ipfs\/\w+$/.test(link) ? link.slice('/ipfs/'.length) : undefined;
}

/**
 * A manifest's schema link and networks; a text that is not a subgraph manifest (no `schema.file` link, no data
 * source naming a network) is refused, naming the hash.
 */
export function parseManifest(text: string, hash: string): { schemaHash: string; networks: string[] } {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    doc = undefined;
  }
  const schema = isObject(doc) && isObject(doc.schema) ? linked(doc.schema.file) : undefined;
  const sources = isObject(doc) ? [doc.dataSources, doc.templates].flatMap((l) => (Array.isArray(l) ? l : [])) : [];
  const networks = [...new Set(sources.map((s) => (isObject(s) ? s.network : undefined)))].filter(
    (n): n is string => typeof n === 'string',
  );
  if (!schema || !networks.length)
    throw new UsageError(
      `${hash} is not a subgraph manifest (it has no ${schema ? 'data source naming a network' : 'schema.file link'}): the endpoint's _meta { deployment } should name a deployment published by graph deploy`,
    );
  return { schemaHash: schema, networks };
}

/** The files of the deployment `deployment`, read from the IPFS endpoint `ipfs`. */
export async function deploymentFiles(ipfs: string, deployment: string, timeoutMs: number): Promise<DeploymentFiles> {
  const manifest = parseManifest(await ipfsCat(ipfs, deployment, timeoutMs), deployment);
  const schema = await ipfsCat(ipfs, manifest.schemaHash, timeoutMs);
  return { deployment, schema, networks: manifest.networks };
}
