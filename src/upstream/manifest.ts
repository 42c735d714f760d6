/**
 * A deployment's manifest (`subgraph.yaml`, as `graph deploy` publishes it): the IPFS link of its schema and the
 * networks its data sources and templates index. Pure, and run in the parse worker (`parse-worker.ts`).
 */
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../errors.ts';
import { inert } from '../util/inert.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The link of a manifest's file entry (`file: { /: /ipfs/HASH }`): its hash. */
function linked(file: unknown): string | undefined {
  const link = isObject(file) ? file['/'] : undefined;
  return typeof link === 'string' && /^\/ipfs\/\w+$/.test(link) ? link.slice('/ipfs/'.length) : undefined;
}

/**
 * A manifest's schema link and networks; a text that is not a subgraph manifest is refused in one line naming the
 * hash and what it is: not YAML (where, and why), an HTML page, or YAML without a `schema.file` link or a data
 * source that names a network.
 */
export function parseManifest(
  text: string,
  hash: string,
): { schemaHash: string; networks: string[]; history?: number } {
  const hint = "the endpoint's _meta { deployment } should name a deployment published by graph deploy";
  if (/^\s*<(!doctype|html|\?xml|head|body)/i.test(text))
    throw new UsageError(
      `${hash} is an HTML page, not a subgraph manifest: is the IPFS endpoint (--ipfs) an IPFS API that serves /api/v0/cat?`,
    );
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new UsageError(
      `${hash} is not a subgraph manifest: it is not YAML (${inert((e as Error).message.split('\n')[0]!.slice(0, 200))}); ${hint}`,
    );
  }
  const schema = isObject(doc) && isObject(doc.schema) ? linked(doc.schema.file) : undefined;
  const sources = isObject(doc) ? [doc.dataSources, doc.templates].flatMap((l) => (Array.isArray(l) ? l : [])) : [];
  const networks = [...new Set(sources.map((s) => (isObject(s) ? s.network : undefined)))].filter(
    (n): n is string => typeof n === 'string',
  );
  if (!schema || !networks.length)
    throw new UsageError(
      `${hash} is not a subgraph manifest (it has no ${schema ? 'data source naming a network' : 'schema.file link'}): ${hint}`,
    );
  const history = isObject(doc) && isObject(doc.indexerHints) ? historyBlocks(doc.indexerHints.prune) : undefined;
  return { schemaHash: schema, networks, ...(history !== undefined ? { history } : {}) };
}

/** `GRAPH_MIN_HISTORY_BLOCKS`' default, what `prune: auto` keeps: twice the reorg threshold of 250 (graph/src/env/mod.rs). */
export const AUTO_HISTORY_BLOCKS = 500;

/**
 * The blocks of history a manifest's `indexerHints.prune` keeps (graph/src/data/subgraph/mod.rs at f27eb5f, `Prune`:
 * `never`, `auto`, or a number, given as one or as text); undefined for every block, or a value graph-node would not
 * take. `auto` is graph-node's default minimum; an indexer may set it higher.
 */
function historyBlocks(prune: unknown): number | undefined {
  if (prune === 'auto') return AUTO_HISTORY_BLOCKS;
  const n = typeof prune === 'string' && /^\d+$/.test(prune) ? Number(prune) : prune;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 && n <= 2 ** 31 - 1 ? n : undefined;
}
