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
  const { chainId, days } = at;
  return (await foundCountsOf(w, at, [{ chainId, ...(days ? { days } : {}) }])).get(chainId)!;
}

/**
 * `foundCounts` of several chains, each with its own days, in one statement: the identity's SQL once per chain, joined
 * by UNION ALL, each copy with parameters of its own (a run's verification asked one statement per identity and chain,
 * 120 on the demo's 8 chains).
 */
export async function foundCountsOf(
  w: Pick<Warehouse, 'all'>,
  of: { readonly identity: Identity; readonly ds: Dataset },
  chains: readonly { readonly chainId: number; readonly days?: DayRange }[],
): Promise<Map<number, FoundValue[]>> {
  const found = new Map<number, FoundValue[]>(chains.map((c) => [c.chainId, []]));
  if (chains.length === 0) return found;
  const sql = of.identity.found.replaceAll('{table}', qt(of.ds.table));
  const params: Record<string, number> = {};
  const parts = chains.map((c, i) => {
    params[`c${i}`] = c.chainId;
    if (of.identity.counter.byDay) [params[`f${i}`], params[`l${i}`]] = [c.days!.first, c.days!.last];
    const own = sql.replaceAll(/\$([123])\b/g, (_, n: string) => `$${'cfl'[Number(n) - 1]}${i}`);
    return `SELECT $c${i} AS _chain, * FROM (${own})`;
  });
  for (const r of await w.all(parts.join(' UNION ALL '), params))
    found.get(Number(r._chain))?.push({
      key: String(r.key),
      day: r.day === null ? null : Number(r.day),
      found: Number(r.found),
    });
  return found;
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
