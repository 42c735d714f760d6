/**
 * The one query a run's batch of first pages is (`first-pages.ts`): an alias per dataset's first page, and one per
 * question of which of its window's ids are still upstream; and the ids such an answer holds.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Endpoint } from '../upstream/client.ts';
import type { PassRequest } from './paginate/pass.ts';
import { idType, pageField } from './queries.ts';

/** One task's first page request, as its route's `RoutedSource` will send it. */
export interface FirstAsk {
  readonly endpoint: Endpoint;
  readonly ds: Dataset;
  /** The route's collection field of the dataset's entity. */
  readonly root: string;
  readonly request: PassRequest;
  /**
   * Ids whose presence the task will ask at its block (a mutable dataset's rows read within the re-read window by
   * earlier runs: `paginate/mutable.ts`, `removeGone`), asked in the same batch; at most a page of them.
   */
  readonly present?: readonly string[];
}

/** The batched query of `asks`: alias `a<i>` per ask, its variables renamed `$a<i>_<name>`. */
export function batchQuery(asks: readonly FirstAsk[], first: number): { query: string; vars: Record<string, unknown> } {
  const decls: string[] = [];
  const fields: string[] = [];
  const vars: Record<string, unknown> = {};
  asks.forEach((a, i) => {
    const { vars: declared, field } = pageField(a.ds, a.root, a.request.shape);
    const rename = (text: string) => text.replace(/\$([A-Za-z_]\w*)/g, `$a${i}_$1`);
    decls.push(rename(declared));
    fields.push(`a${i}: ${rename(field)}`);
    for (const [k, v] of Object.entries({ first, ...a.request.vars })) vars[`a${i}_${k}`] = v;
    if (a.present?.length) {
      decls.push(`$p${i}_first: Int!, $p${i}_block: Int!, $p${i}_ids: [${idType(a.ds)}!]!`);
      fields.push(
        `p${i}: ${a.root}(first: $p${i}_first, block: { number: $p${i}_block }, where: { id_in: $p${i}_ids }) { id }`,
      );
      Object.assign(vars, {
        [`p${i}_first`]: a.present.length,
        [`p${i}_block`]: a.request.vars.block,
        [`p${i}_ids`]: a.present,
      });
    }
  });
  return { query: `query FirstPages(${decls.join(', ')}) { ${fields.join(' ')} }`, vars };
}

/**
 * The ids each ask's presence alias holds (undefined for an ask without one); undefined when one is not a list of rows
 * with a text id each.
 */
export function heldIds(
  asks: readonly FirstAsk[],
  members: ReadonlyMap<string, Uint8Array>,
): (Set<string> | undefined)[] | undefined {
  const out: (Set<string> | undefined)[] = [];
  for (const [i, a] of asks.entries()) {
    if (!a.present?.length) {
      out.push(undefined);
      continue;
    }
    const rows: unknown = JSON.parse(Buffer.from(members.get(`p${i}`)!).toString('utf8'));
    if (!Array.isArray(rows)) return undefined;
    const ids = new Set<string>();
    for (const r of rows) {
      const id = (r as { id?: unknown } | null)?.id;
      if (typeof id !== 'string') return undefined;
      ids.add(id);
    }
    out.push(ids);
  }
  return out;
}
