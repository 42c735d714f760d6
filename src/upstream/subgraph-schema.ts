/**
 * Where a subgraph's schema comes from when it is added or refreshed: `--schema FILE`, or its deployments' own files on
 * IPFS (each manifest checked to index the chain it was given for), or the first deployment's introspection when no
 * IPFS endpoint answers. Every text is read and checked within bounds (`bounded-parse.ts`), and a stop request ends
 * the reading at once.
 */
import { readFileSync, statSync } from 'node:fs';
import type { IntrospectionQuery } from 'graphql';
import type { SubgraphDeployment } from '../catalog/subgraphs.ts';
import { chainName, chainOfNetwork, networkOf, REGISTRY_VERSION } from '../config/chains.ts';
import { UsageError } from '../errors.ts';
import { bytesText } from '../util/http-body.ts';
import { inert } from '../util/inert.ts';
import { checkSchemaBounded, SCHEMA_BYTES } from './bounded-parse.ts';
import type { UpstreamClient } from './client.ts';
import { deploymentFiles, IpfsUnavailable } from './deployment-source.ts';
import { endpointInfo, PROBE_QUERY, type ProbeAnswer } from './endpoint-probe.ts';
import { INTROSPECTION_QUERY, sdlFromIntrospection } from './introspect-schema.ts';
import { urlEndpoint } from './routes.ts';

/** A deployment of a subgraph as its endpoint answered `_meta`: its head, and its id (its manifest's IPFS hash). */
export interface Answered extends SubgraphDeployment {
  readonly block: number;
  readonly deployment: string | undefined;
}

/** Asks a URL for `_meta` as graph-node answers it; a usage error that names the URL when it does not. */
export async function checkGraphNode(client: UpstreamClient, d: SubgraphDeployment): Promise<Answered> {
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
 * The entities (and aggregations) of `types` that a deployment serves no collection of (its probe: the root fields by
 * their return type, as a run finds them, `endpoint-probe.ts`), per deployment, in the order given.
 */
export async function unservedEntities(
  client: UpstreamClient,
  deps: readonly SubgraphDeployment[],
  types: readonly string[],
): Promise<string[][]> {
  const out: string[][] = [];
  for (const d of deps) {
    const a = await client.request<ProbeAnswer>(urlEndpoint(d.url), PROBE_QUERY, {});
    const roots = endpointInfo(a.data).roots;
    out.push(types.filter((t) => !roots.has(t)));
  }
  return out;
}

/**
 * The deployments with the entities of `types` each serves no collection of recorded (`SubgraphDeployment.unserved`),
 * and a line for each that lacks some. A deployment that serves none of them is refused: the schema is not its (a
 * `--schema` of another subgraph), naming what it lacks and the fix.
 */
export async function withUnserved(
  client: UpstreamClient,
  deps: readonly SubgraphDeployment[],
  at: { readonly types: readonly string[]; readonly name: string; readonly file?: string | undefined },
): Promise<{ deployments: SubgraphDeployment[]; lines: string[] }> {
  const missing = await unservedEntities(client, deps, at.types);
  const lines: string[] = [];
  const deployments = deps.map((d, i) => {
    const { unserved: _, ...rest } = d;
    const lack = missing[i]!;
    const label = urlEndpoint(d.url).label;
    const some = lack.slice(0, 5).join(', ') + (lack.length > 5 ? `, and ${lack.length - 5} more` : '');
    if (lack.length && lack.length === at.types.length)
      throw new UsageError(
        `${at.file ? `--schema ${at.file}` : 'the schema'} is not the schema of ${label}: it serves none of its entities (${inert(some)}); ${at.file ? "leave out --schema to take the deployment's own" : 'check the URL'}`,
      );
    if (!lack.length) return rest;
    lines.push(
      `  ${chainName(d.chainId)}: not served there, so not read there: ${inert(some)} (${label} has no collection of ${lack.length === 1 ? 'it' : 'them'}; pool-export subgraph refresh ${at.name} reads ${lack.length === 1 ? 'it' : 'them'} once it has)`,
    );
    return { ...rest, unserved: lack };
  });
  return { deployments, lines };
}

/** Where to read a subgraph's schema from, and within what. */
export interface SchemaSource {
  /** The subgraph's name, for messages. */
  readonly name: string;
  /** `--schema FILE`, when given. */
  readonly file?: string | undefined;
  /** The IPFS endpoint, and whether the user named it (then its not answering is an error). */
  readonly ipfs: { readonly url: string; readonly named: boolean };
  readonly client: UpstreamClient;
  readonly deps: readonly Answered[];
  /** Milliseconds each request may take. */
  readonly timeoutMs: number;
  /** A stop request: ends every read at once. */
  readonly signal?: AbortSignal;
  /** Tells the user what the schema could not show (a line on stderr). */
  readonly note: (line: string) => void;
  /** Filled with the blocks of history each deployment whose manifest was read keeps, by URL (0: every block). */
  readonly history?: Map<string, number>;
}

/** The schema text of a subgraph (see the module's comment), checked as `subgraph add` takes it. */
export async function schemaText(src: SchemaSource): Promise<string> {
  if (src.file) {
    const text = readSchemaFile(src.file);
    await checkSchemaBounded({ name: src.name, text, what: `--schema ${src.file}`, signal: src.signal });
    return text;
  }
  const own = await deploymentSchema(src);
  if (own !== undefined) {
    await checkSchemaBounded({
      name: src.name,
      text: own.text,
      what: `the schema of ${own.deployment}`,
      signal: src.signal,
    });
    return own.text;
  }
  const url = urlEndpoint(src.deps[0]!.url);
  const answer = await src.client.request<IntrospectionQuery>(url, INTROSPECTION_QUERY, {});
  if (!answer.data?.__schema) throw new UsageError(`${url.label} answers no introspection: pass --schema FILE`);
  const text = sdlFromIntrospection(answer.data);
  await checkSchemaBounded({ name: src.name, text, what: `the schema ${url.label} introspects`, signal: src.signal });
  return text;
}

/** A schema file's text, refused past `SCHEMA_BYTES` before it is read. */
function readSchemaFile(file: string): string {
  try {
    const size = statSync(file).size;
    if (size > SCHEMA_BYTES)
      throw new UsageError(`--schema ${file} is larger than ${bytesText(SCHEMA_BYTES)}: it is no subgraph's schema`);
    return readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--schema: cannot read ${file} (${(e as Error).message})`);
  }
}

/**
 * The schema of a subgraph's deployments from their own files on IPFS, each deployment's manifest checked to index the
 * chain it was given for; undefined (with a note saying what introspection cannot see) when the IPFS endpoint does not
 * answer, unless the user named it: then that is an error.
 */
async function deploymentSchema(src: SchemaSource): Promise<{ text: string; deployment: string } | undefined> {
  let schema: { text: string; deployment: string } | undefined;
  try {
    for (const d of src.deps) {
      if (!d.deployment) throw new IpfsUnavailable(`${urlEndpoint(d.url).label} names no deployment in its _meta`);
      const files = await deploymentFiles(src.ipfs.url, d.deployment, {
        timeoutMs: src.timeoutMs,
        ...(src.signal ? { signal: src.signal } : {}),
      });
      checkNetwork(d, files.networks, src.note);
      src.history?.set(d.url, files.history ?? 0);
      schema ??= { text: files.schema, deployment: d.deployment };
    }
    return schema;
  } catch (e) {
    if (!(e instanceof IpfsUnavailable) || src.signal?.aborted) throw e;
    if (src.ipfs.named) throw new UsageError(`${e.message}: check --ipfs, or give --schema FILE`);
    src.note(
      `schema by introspection: ${e.message}; introspection does not show which entities are immutable, timeseries or aggregations (--ipfs URL or --schema FILE gives them)`,
    );
    return undefined;
  }
}

/** A deployment's manifest must index the chain it was given for; a network the registry does not know is noted. */
function checkNetwork(d: Answered, networks: readonly string[], note: (line: string) => void): void {
  const known = networks.map(chainOfNetwork).filter((c): c is number => c !== undefined);
  const given = `${networkOf(d.chainId) ?? chainName(d.chainId)} (chain ${d.chainId})`;
  if (known.length && !known.includes(d.chainId))
    throw new UsageError(
      `--chain ${chainName(d.chainId)} with ${urlEndpoint(d.url).label}: its deployment ${d.deployment} indexes ${inert(networks.join(', '))} (chain ${known[0]}), not ${given}; give --chain ${chainName(known[0]!)}`,
    );
  if (!known.length)
    note(
      `${urlEndpoint(d.url).label}: its deployment indexes ${inert(networks.join(', '))}, a network The Graph's networks registry ${REGISTRY_VERSION} does not name; taken as ${given}, as --chain says`,
    );
}
