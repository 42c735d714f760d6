/**
 * One identity reconciled: the upstream's counters against the warehouse's count of the same groups, group by group.
 * A group either side lacks counts 0 there (a group the upstream no longer holds is left out where the identity says
 * so).
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { qt } from '../util/sql.ts';
import type { DayRange } from './counters.ts';
import type { CounterValue, Identity, KeyKind } from './identities.ts';

/** One group whose stored rows differ from the upstream's counter. */
export interface Mismatch {
  readonly chainId: number;
  readonly dataset: string;
  readonly identity: string;
  /** The day (Unix seconds of its start), or null for a count over the whole table. */
  readonly day: number | null;
  /** The pool, token or crowd pool, or null for a count of a whole day or table. */
  readonly key: string | null;
  readonly keyKind: KeyKind | null;
  readonly expected: number;
  readonly found: number;
  /** What differs, where a count does not say it (`verify --values`: the fields of a row whose values differ). */
  readonly detail?: string;
}

/** A stored count of one group. */
export interface FoundValue {
  readonly key: string;
  readonly day: number | null;
  readonly found: number;
}

/** The stored counts of an identity's groups on a chain (of the days in `days`, for a day identity). */
export async function foundCounts(
  w: Pick<Warehouse, 'all'>,
  at: { readonly identity: Identity; readonly ds: Dataset; readonly chainId: number; readonly days?: DayRange },
): Promise<FoundValue[]> {
  const sql = at.identity.found.replaceAll('{table}', qt(at.ds.table));
  const params = at.identity.counter.byDay ? [at.chainId, at.days!.first, at.days!.last] : [at.chainId];
  return (await w.all(sql, params)).map((r) => ({
    key: String(r.key),
    day: r.day === null ? null : Number(r.day),
    found: Number(r.found),
  }));
}

/** Compares counters with stored counts: the groups compared, and those that differ (by day, then key). */
export function reconcile(
  identity: Identity,
  sides: {
    readonly chainId: number;
    readonly counters: readonly CounterValue[];
    readonly found: readonly FoundValue[];
  },
): { groups: number; mismatches: Mismatch[] } {
  const id = (day: number | null, key: string) => JSON.stringify([day, key]);
  const groups = new Map<string, { day: number | null; key: string; expected: number; found: number }>();
  // One counter per group (an upstream that repeats a row repeats its counter: the last one stands).
  for (const c of sides.counters)
    groups.set(id(c.day, c.key), { day: c.day, key: c.key, expected: c.expected, found: 0 });
  for (const f of sides.found) {
    const g = groups.get(id(f.day, f.key));
    if (!g && identity.countedOnly) continue;
    groups.set(id(f.day, f.key), { ...(g ?? { day: f.day, key: f.key, expected: 0 }), found: f.found });
  }
  const mismatches = [...groups.values()]
    .filter((g) => g.expected !== g.found)
    .sort((a, b) => (a.day ?? 0) - (b.day ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(
      (g): Mismatch => ({
        chainId: sides.chainId,
        dataset: identity.dataset,
        identity: identity.name,
        day: g.day,
        key: identity.keyKind ? g.key : null,
        keyKind: identity.keyKind ?? null,
        expected: g.expected,
        found: g.found,
      }),
    );
  return { groups: groups.size, mismatches };
}
