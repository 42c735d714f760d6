/**
 * The liquidity-list dataset carries every field of a list item as the service's own types declare them
 * (test/fixtures/real-liquidity-list-types.json, transcribed from DODOEX/widgets a56d6a1a graphql.ts), and treats a
 * field as nullable exactly where those types (or a parent) may be null.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIQUIDITY_DATASET, type StructType } from '../../src/catalog/catalog.ts';

const REAL = JSON.parse(
  readFileSync(new URL('../fixtures/real-liquidity-list-types.json', import.meta.url), 'utf8'),
) as {
  types: Record<string, Record<string, string>>;
};

const named = (t: string) => t.replace(/[[\]!]/g, '');

/** Every leaf field path under a type, with whether it or a parent may be null (lists of objects stop at the list). */
function leaves(type: string, prefix: string, nullable: boolean): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const [field, t] of Object.entries(REAL.types[type]!)) {
    const path = prefix ? `${prefix}.${field}` : field;
    const inner = named(t);
    const mayBeNull = nullable || !t.endsWith('!');
    if (REAL.types[inner] && !t.startsWith('[')) for (const [p, n] of leaves(inner, path, mayBeNull)) out.set(p, n);
    else out.set(path, mayBeNull);
  }
  return out;
}

/** The leaf paths of an element shape, as the same notation. */
function structLeaves(t: StructType, prefix: string): string[] {
  return Object.entries(t).flatMap(([k, v]) =>
    typeof v === 'string' ? [`${prefix}.${k}`] : structLeaves(v, `${prefix}.${k}`),
  );
}

describe('liquidity-list dataset', () => {
  it('stores every field of a list item, nullable where the real types allow null', () => {
    const real = leaves('LiquidityLqList', '', false);
    // A column may be null when its field, or an object on its way, may be.
    const stored = new Map(
      LIQUIDITY_DATASET.columns.map((c) => [c.select, c.nullable || (c.parents ?? []).some(Boolean)]),
    );
    // The item's id is the row's key: a null one is refused as garbage rather than stored.
    real.set('id', false);
    expect([...stored.keys()].sort()).toEqual([...real.keys()].sort());
    for (const [path, nullable] of real) expect(stored.get(path), path).toBe(nullable);
  });

  it('stores each liquidity position whole: every field of LiquidityLp and its nested types', () => {
    const positions = LIQUIDITY_DATASET.columns.find((c) => c.select === 'liquidityPositions')!;
    expect(structLeaves(positions.struct!, 'p').sort()).toEqual([...leaves('LiquidityLp', 'p', false).keys()].sort());
  });
});
