/**
 * Whether what a task read before still stands: the block its last complete read saw as the route's head (number and
 * hash, in the ledger) is still on the chain the route serves now. Where it is, nothing read at or below it was
 * reverted since, so the task reads only what is new; where it is not, or it cannot be told, the task re-reads its
 * window (`reorgWindowSecs`), as every run did before.
 *
 * How it is told, from what graph-node answers (graphprotocol/graph-node f27eb5f, `graphql/src/store/resolver.rs`):
 * - `_meta(block: { number })` gives no hash (`locate_blocks` sets it to zero, and `lookup_meta` answers null), so a
 *   block's hash cannot be asked by its number;
 * - `_meta(block: { hash })` finds any block the chain store holds, reverted ones too (`store/postgres/src/
 *   chain_store.rs`, `block_numbers`: `where hash = any(…)`, with no look at the main chain), so that a hash is found
 *   proves nothing;
 * - but the `parentHash` it gives of a block is a fact of that block. So the chain of the route's head is walked down,
 *   one request a block, from the head's hash to the last read's block, and that block's hash there is compared with
 *   the one recorded.
 *
 * One walk serves every route of a chain that lies on it (a route whose head is one of the walked hashes). A walk longer
 * than `reorgCheckBlocks` is not made: the window is read again (on a chain whose blocks come fast enough for that, the
 * window is short beside what is new anyway). A request that fails, or an endpoint without `parentHash` (graph-node
 * before 0.35), ends the walk: its tasks re-read their window.
 */
import pLimit from 'p-limit';
import { historyOf } from '../../catalog/subgraphs.ts';
import { chainName } from '../../config/chains.ts';
import type { Config } from '../../config/config.ts';
import type { Endpoint } from '../../upstream/client.ts';
import { redact } from '../../upstream/upstream-error.ts';
import { maxOf, minOf } from '../../util/extremes.ts';
import type { EventLog } from '../../util/logger.ts';
import type { PageSource } from '../seams.ts';
import type { Task } from '../task.ts';
import type { Cursor } from '../task-run.ts';
import type { TaskRoute } from './run-routes.ts';

/** A block's parent, by the block's hash (graph-node's `_Block_.parentHash`, from the chain store). */
export const PARENT_QUERY =
  'query ($hash: Bytes) { _meta(block: { hash: $hash }) { block { number hash parentHash } } }';

interface ParentAnswer {
  readonly _meta: { block: { number: number; hash: string | null; parentHash?: string | null } };
}

/** A block by number and hash (lower-cased). */
interface Head {
  readonly number: number;
  readonly hash: string;
}

/** One task that continues a complete read on a route whose head moved. */
interface Asked {
  readonly task: Task;
  readonly endpoint: Endpoint;
  readonly head: Head;
  /** The head its last complete read saw. */
  readonly last: Head;
}

/** What a run needs to check the chains of its tasks. */
export interface ReorgCheckArgs {
  readonly tasks: readonly Task[];
  readonly pinned: ReadonlyMap<Task, TaskRoute>;
  /** Each task's last complete read (`<chainId>/<dataset>`): its cursor, and the route's head then (`number:hash`). */
  readonly complete: ReadonlyMap<string, { readonly cursor: string; readonly head: string }>;
  readonly source: Pick<PageSource, 'request'>;
  readonly config: Pick<Config, 'reorgCheckBlocks' | 'confirmations' | 'concurrency' | 'secrets'>;
  readonly log: EventLog;
}

/** A task's key among the run's: `<chainId>/<dataset>`, as the checkpoints' (a task is copied on its way to run). */
export function taskKey(task: Pick<Task, 'chainId' | 'ds'>): string {
  return `${task.chainId}/${task.ds.name}`;
}

/** A head as the ledger keeps it (`run_tasks.head`): `number:hash`; undefined without a hash. */
export function headKey(head: {
  readonly number: number;
  readonly hash: string | null | undefined;
}): string | undefined {
  return head.hash ? `${head.number}:${head.hash}` : undefined;
}

/** `number:hash` as the ledger keeps a head, or undefined. */
function parseHead(text: string): Head | undefined {
  const at = text.indexOf(':');
  const number = Number(text.slice(0, at));
  return at > 0 && Number.isInteger(number) ? { number, hash: text.slice(at + 1).toLowerCase() } : undefined;
}

/**
 * Whether the cursor's block is the one the read that saw `last` pinned (the head, or `confirmations` below it). A
 * cursor at an earlier block (a full pass resumed by a later run ends at the block it began at) holds rows read by an earlier,
 * unchecked run: its window is read again.
 */
function pinnedBy(cursor: Cursor, last: Head, confirmations: number): boolean {
  return (
    cursor.block !== undefined &&
    cursor.block <= last.number &&
    cursor.block >= Math.max(0, last.number - confirmations)
  );
}

/** The tasks that continue a complete read on a route whose head moved, grouped by chain. */
function askedByChain(args: ReorgCheckArgs): Map<number, Asked[]> {
  const byChain = new Map<number, Asked[]>();
  for (const task of args.tasks) {
    const at = args.pinned.get(task);
    const probe = at?.probe;
    if (!at || !probe || probe instanceof Error || task.ds.kind === 'list') continue;
    const { number, hash } = probe.info.head;
    const complete = args.complete.get(taskKey(task));
    const last = complete && parseHead(complete.head);
    if (!hash || !complete || !last || complete.head === headKey({ number, hash })) continue;
    if (!pinnedBy(JSON.parse(complete.cursor) as Cursor, last, args.config.confirmations)) continue;
    const asked = { task, endpoint: at.endpoint, head: { number, hash: hash.toLowerCase() }, last };
    const list = byChain.get(task.chainId);
    if (list) list.push(asked);
    else byChain.set(task.chainId, [asked]);
  }
  return byChain;
}

/**
 * The main chain's hashes from the highest head of `asked` down to block `low`, walked one parent at a time; the walk
 * stops early where a request fails or gives no parent. With the number of requests it made.
 */
async function walk(
  args: ReorgCheckArgs,
  asked: readonly Asked[],
  low: number,
): Promise<{ hashes: Map<number, string>; requests: number; stopped?: string }> {
  const top = asked.reduce((a, b) => (b.head.number > a.head.number ? b : a));
  const hashes = new Map([[top.head.number, top.head.hash]]);
  let cur: Head = top.head;
  let requests = 0;
  while (cur.number > low) {
    requests++;
    let block: ParentAnswer['_meta']['block'];
    try {
      block = (await args.source.request<ParentAnswer>(top.endpoint, PARENT_QUERY, { hash: cur.hash })).data._meta
        .block;
    } catch (e) {
      return { hashes, requests, stopped: redact((e as Error).message, args.config.secrets) };
    }
    if (block.number !== cur.number || typeof block.parentHash !== 'string' || !block.parentHash)
      return { hashes, requests, stopped: `block ${cur.number} came back without its parent's hash` };
    cur = { number: cur.number - 1, hash: block.parentHash.toLowerCase() };
    hashes.set(cur.number, cur.hash);
  }
  return { hashes, requests };
}

/**
 * The tasks whose earlier reads stand (by `taskKey`): their last complete read's head is on the chain their route serves now, and
 * their checkpoint is at the block that read pinned. They read only what is new; the others re-read their window.
 */
export async function settledTasks(args: ReorgCheckArgs): Promise<Set<string>> {
  const settled = new Set<string>();
  const max = args.config.reorgCheckBlocks;
  const limit = pLimit(args.config.concurrency);
  await Promise.all(
    [...askedByChain(args)].map(([chainId, asked]) =>
      limit(async () => {
        const top = maxOf(asked.map((a) => a.head.number));
        // A last read more than `reorgCheckBlocks` below the head is not walked to: its task re-reads its window. Nor
        // is one below the history a deployment keeps (`indexerHints.prune`): it may be pruned.
        const kept = minOf(asked.map((a) => historyOf(a.task.ds.schema, chainId) ?? Number.POSITIVE_INFINITY));
        const low = Math.max(top - max, top - kept, minOf(asked.map((a) => a.last.number)));
        const chain = chainName(chainId);
        const far = asked.filter((a) => a.last.number < low).length;
        const { hashes, requests, stopped } =
          far === asked.length ? { hashes: new Map<number, string>(), requests: 0 } : await walk(args, asked, low);
        let reverted = 0;
        let stands = 0;
        for (const a of asked) {
          // A route on the walked chain whose task's last read is there too.
          const onChain = hashes.get(a.head.number) === a.head.hash;
          const seen = hashes.get(a.last.number);
          if (onChain && seen === a.last.hash) {
            settled.add(taskKey(a.task));
            stands++;
          } else if (onChain && seen !== undefined) reverted++;
        }
        const fields = {
          chain,
          chainId,
          blocks: top - low,
          requests,
          settled: stands,
          reverted,
          ...(far ? { far } : {}),
        };
        args.log('reorg-check', stopped ? { ...fields, stopped } : fields, reverted > 0 ? 'warn' : 'info');
      }),
    ),
  );
  return settled;
}
