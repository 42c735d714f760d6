/**
 * A deployment as the sandbox serves it (a schema on one chain, under its profile's names) and the blocks it answers
 * at: its indexed head (less `--lag-blocks`), its earliest block (`--prune`), and graph-node's errors for the others.
 */
import type { GraphQLSchema } from 'graphql';
import type { EntityModel, SchemaModel } from '../schemas/entity-model.ts';
import type { ApiOptions } from './api-schema.ts';
import type { Limits } from './collection.ts';
import { blockAheadError, blockBeforeError, decodeError } from './graph-errors.ts';
import type { PruneState } from './prune.ts';
import type { Row, Table, View } from './table.ts';
import type { Timeline } from './timeline.ts';

/** One deployment: a schema served for one chain, with its root fields named by its profile. */
export interface Deployment {
  readonly id: string;
  readonly model: SchemaModel;
  readonly api: GraphQLSchema;
  /** How the API schema was built (naming, `_change_block`), so that a narrowed copy is built alike. */
  readonly apiOptions: ApiOptions;
  /** Root query fields: entity and whether the field returns a collection. */
  readonly roots: ReadonlyMap<string, { entity: EntityModel; many: boolean }>;
  readonly tables: ReadonlyMap<string, Table>;
  readonly tl: Timeline;
  /** Blocks the deployment's index stays behind the chain's head (a lagging indexer); shared by the sandbox's routes. */
  readonly lag?: { readonly blocks: number };
  /** How much history the deployment keeps (`--prune`): blocks before its earliest are not served. */
  readonly prune?: PruneState;
}

/** The earliest block the deployment serves: its start, or where pruning has moved it (`prune.ts`). */
export function earliestServed(dep: Deployment): number {
  const start = dep.tl.spec.startBlock;
  return dep.prune ? dep.prune.earliestOf(dep.id, start, indexedHead(dep)) : start;
}

/** The latest block the deployment has indexed: the chain's head, or `lag` blocks behind it (never before its start). */
export function indexedHead(dep: Deployment): number {
  const lag = dep.lag?.blocks ?? 0;
  return lag > 0 ? Math.max(dep.tl.spec.startBlock, dep.tl.head - lag) : dep.tl.head;
}

/** A GraphQL request body. */
export interface GraphQLRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** Per-request switches set by fault injection. */
export interface ExecOptions {
  readonly limits: Limits;
  readonly indexingError?: boolean;
  /** Changes each served row of an entity (garbage injection). */
  readonly garble?: (entity: string, row: Record<string, unknown>) => void;
  /** Changes each served page of a root collection (garbage injection). */
  readonly garblePage?: (entity: string, rows: Record<string, unknown>[]) => void;
  /** Whether a row a root collection's answer would hold is left out of it, silently (see `runCollection`). */
  readonly omit?: (entity: string, row: Row) => boolean;
  /** Called with the rows each root field's answer holds. */
  readonly served?: (entity: string, rows: readonly Row[]) => void;
}

/** The JSON result of a query. */
export interface GraphQLResult {
  data?: Record<string, unknown>;
  errors?: { message: string; locations?: readonly { line: number; column: number }[] }[];
}

export type Block = { number?: number; hash?: string; number_gte?: number } | undefined;

/** Resolves a `block` argument to a view, with graph-node's errors for blocks that cannot be served. */
export function resolveBlock(dep: Deployment, block: Block): { view: View; hashKnown: boolean } {
  const tl = dep.tl;
  const head = indexedHead(dep);
  const view = (at: number) => ({ at, epoch: tl.epoch });
  if (!block) return { view: view(head), hashKnown: true };
  if (block.hash !== undefined && block.hash !== null) {
    const at = tl.blockOfHash(String(block.hash));
    // A lagging index has not seen the blocks past its head, so it cannot know their hashes either.
    if (at === undefined || at > head) throw decodeError('block.hash', 'no block with that hash found');
    const earliest = earliestServed(dep);
    if (at < earliest) throw blockBeforeError(dep.id, earliest, at);
    return { view: view(at), hashKnown: true };
  }
  if (block.number_gte !== undefined && block.number_gte !== null) {
    if (block.number_gte > head) throw blockAheadError('number_gte', dep.id, head, block.number_gte);
    return { view: view(head), hashKnown: true };
  }
  if (block.number !== undefined && block.number !== null) {
    if (block.number > head) throw blockAheadError('number', dep.id, head, block.number);
    const earliest = earliestServed(dep);
    if (block.number < earliest) throw blockBeforeError(dep.id, earliest, block.number);
    return { view: view(block.number), hashKnown: false };
  }
  return { view: view(head), hashKnown: true };
}

/** The `graph-indexed` header value: the latest indexed block. */
export function indexedHeader(dep: Deployment): string {
  const tl = dep.tl;
  const head = indexedHead(dep);
  return JSON.stringify({ hash: tl.hash(head), number: head, timestamp: tl.ts(head) });
}
