/**
 * A deployment's own files: its manifest (`subgraph.yaml`) and its `schema.graphql`, read from IPFS by the deployment
 * id its endpoint answers (`_meta { deployment }`), as graph-node itself reads them. The schema keeps what graph-node's
 * introspection drops: `@entity(immutable: true)`, `timeseries`, `@aggregation` and their intervals; the manifest names
 * the network each data source indexes. Read through the Kubo RPC API's `cat` (`POST <ipfs>/api/v0/cat?arg=HASH`, an
 * empty body: graph-node's `graph/src/ipfs/rpc_client.rs` at 90e949d), which The Graph's IPFS endpoint serves.
 */
import { BodyTooLargeError, UsageError } from '../errors.ts';
import { bytesText, readText } from '../util/http-body.ts';
import { inert } from '../util/inert.ts';
import { MANIFEST_BYTES, parseManifestBounded, SCHEMA_BYTES } from './bounded-parse.ts';

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
  /** The blocks of history it keeps (`indexerHints.prune`), or undefined for every block. */
  readonly history?: number;
}

/** Why a fetch or the read of its body failed, in a few words: a time-out, or the cause fetch hides (ECONNRESET…). */
function failure(e: unknown, timeoutMs: number): string {
  const err = e as Error;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer in ${timeoutMs / 1000} s`;
  // fetch's own message is "fetch failed" (or "terminated", the body cut off): what failed is its cause.
  const cause = (err.cause as Error | undefined)?.message;
  return cause ?? err.message;
}

/**
 * One file of an IPFS endpoint, within the time (`timeoutMs`, the body's read included) and byte (`budget`) budgets.
 * A file past the budget is refused; one the endpoint could not give (unreachable, an HTTP error, too slow, the
 * connection reset) is `IpfsUnavailable`, naming why.
 */
export async function ipfsCat(
  ipfs: string,
  hash: string,
  at: { readonly timeoutMs: number; readonly budget: number; readonly signal?: AbortSignal },
): Promise<string> {
  const url = `${ipfs.replace(/\/*$/, '/')}api/v0/cat?arg=${encodeURIComponent(hash)}`;
  const signal = at.signal
    ? AbortSignal.any([at.signal, AbortSignal.timeout(at.timeoutMs)])
    : AbortSignal.timeout(at.timeoutMs);
  const unavailable = (e: unknown) =>
    new IpfsUnavailable(`the IPFS endpoint ${ipfs} could not give ${hash} (${failure(e, at.timeoutMs)})`, { cause: e });
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-length': '0' }, signal });
  } catch (e) {
    throw unavailable(e);
  }
  if (!res.ok) {
    const body = await readText(res, 4096, { truncate: true }).catch(() => '');
    throw new IpfsUnavailable(
      `the IPFS endpoint ${ipfs} could not give ${hash} (HTTP ${res.status}: ${inert(body.trim().slice(0, 200))})`,
    );
  }
  try {
    return await readText(res, at.budget);
  } catch (e) {
    if (e instanceof BodyTooLargeError)
      throw new UsageError(`${hash} from ${ipfs} is larger than ${bytesText(at.budget)}: it is no subgraph's file`);
    throw unavailable(e);
  }
}

/**
 * The files of the deployment `deployment`, read from the IPFS endpoint `ipfs`: the manifest (at most
 * `MANIFEST_BYTES`) and the schema it links (at most `SCHEMA_BYTES`), each parsed within bounds (`bounded-parse.ts`).
 */
export async function deploymentFiles(
  ipfs: string,
  deployment: string,
  at: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<DeploymentFiles> {
  const text = await ipfsCat(ipfs, deployment, { ...at, budget: MANIFEST_BYTES });
  const manifest = await parseManifestBounded(text, deployment, { signal: at.signal });
  const schema = await ipfsCat(ipfs, manifest.schemaHash, { ...at, budget: SCHEMA_BYTES });
  const history = manifest.history;
  return { deployment, schema, networks: manifest.networks, ...(history !== undefined ? { history } : {}) };
}
