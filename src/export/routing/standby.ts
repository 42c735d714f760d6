/** Whether a standby route can take a task over where it stands (`routed-source.ts`, `failover`). */
import type { Dataset } from '../../catalog/catalog.ts';
import { HEAD_QUERY, type HeadAnswer } from '../../upstream/endpoint-probe.ts';
import type { PageSource } from '../seams.ts';
import type { StandbyRoute, TaskPin } from '../task.ts';
import { hasBlock } from './route-choice.ts';

/** Whether a standby route can continue the task now: its root field and head, or why not. */
export async function readiness(
  source: Pick<PageSource, 'request'>,
  next: StandbyRoute,
  now: { readonly ds: Dataset; readonly pin: TaskPin; readonly label: string },
): Promise<{ root: string; head: { number: number; hash: string | null } } | string> {
  const root = next.info.roots.get(now.ds.entity);
  if (root === undefined) return `it has no ${now.ds.entity} entity`;
  if (next.info.changeBlock !== now.pin.changeBlock)
    return 'it differs from the current route in `_change_block` filters';
  let meta: { number: number; hash: string | null; errors: boolean };
  try {
    const m = (await source.request<HeadAnswer>(next.endpoint, HEAD_QUERY, {})).data._meta;
    meta = { number: m.block.number, hash: m.block.hash, errors: m.hasIndexingErrors };
  } catch (err) {
    return `it did not answer (${(err as Error).message})`;
  }
  if (meta.errors) return 'it reports indexing errors';
  if (meta.number < now.pin.block.number)
    return `it has indexed only up to block ${meta.number}, before the task's block ${now.pin.block.number}`;
  const cur = now.pin.head;
  if (cur?.hash && meta.hash && meta.number >= cur.number) {
    if (meta.number === cur.number && meta.hash !== cur.hash)
      return `it is on another fork: at block ${cur.number} its hash is ${meta.hash}, on ${now.label} ${cur.hash}`;
    // A lookup that fails counts as no: the chain cannot be shown to be the same.
    if (meta.number > cur.number && (await hasBlock(source, next.endpoint, cur.hash)) !== true)
      return `it is on another fork: it has no block with hash ${cur.hash} (block ${cur.number} on ${now.label}); its head ${meta.number} has hash ${meta.hash}`;
  }
  return { root, head: { number: meta.number, hash: meta.hash } };
}
