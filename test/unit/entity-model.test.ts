import { describe, expect, it } from 'vitest';
import { apiSdl } from '../../src/sandbox/api-schema.ts';
import { rootNames } from '../../src/sandbox/naming.ts';
import {
  loadSchemaModel,
  lowerCamel,
  parseSchemaModel,
  pluralize,
  withoutEntities,
} from '../../src/schemas/entity-model.ts';

describe('entity model', () => {
  it('has every entity of the three schemas', () => {
    expect(loadSchemaModel('dodoex').entities).toHaveLength(32);
    expect(loadSchemaModel('token').entities).toHaveLength(5);
    expect(loadSchemaModel('mine').entities).toHaveLength(3);
  });

  // The sandbox's naming modes (graph-node `graph/src/data/graphql/ext.rs` camel_cased_names; `_collection` since
  // ebe91ad42, v0.35.0; the legacy gateway keeps only the collection field: DODOEX/widgets a56d6a1a graphql.ts Query).
  it.each([
    ['DodoZoo', 'dodoZoo', 'dodoZoos', 'dodoZoo'],
    ['OrderHistory', 'orderHistory', 'orderHistories', 'orderHistory'],
    ['PairDayData', 'pairDayData', 'pairDayDatas', 'pairDayData'],
    ['MaintainerEarnings', 'maintainerEarnings', 'maintainerEarnings_collection', undefined],
    ['DPPOracleAdmin', 'dppOracleAdmin', 'dppOracleAdmins', 'dppOracleAdmin'],
    ['MaintainerFeeTx', 'maintainerFeeTx', 'maintainerFeeTxes', 'maintainerFeeTx'],
  ])(
    'the sandbox names the roots of %s like graph-node, in both naming modes',
    (name, single, plural, legacySingle) => {
      expect(rootNames(name, 'current')).toEqual({ single, plural });
      const legacy = rootNames(name, 'legacy');
      expect(legacy).toEqual(legacySingle ? { single: legacySingle, plural } : { plural: 'maintainerEarnings' });
    },
  );

  it('generates the filter suffixes per type', () => {
    const sdl = apiSdl(loadSchemaModel('dodoex'));
    const swapFilter = /input Swap_filter \{([^}]*)\}/.exec(sdl)![1]!;
    for (const f of [
      'id_gt',
      'hash_contains_nocase',
      'timestamp_lte',
      'from_not_contains',
      'pair_',
      'pair_starts_with',
      '_change_block',
      'or',
      'and',
    ]) {
      expect(swapFilter).toMatch(new RegExp(`\\b${f}:`));
    }
    expect(swapFilter).not.toMatch(/\bid_contains:/);
    expect(swapFilter).not.toMatch(/\bfrom_starts_with:/);
    expect(/enum Swap_orderBy \{([^}]*)\}/.exec(sdl)![1]).toContain('pair__updatedAt');
  });
});

describe('reading entity SDL', () => {
  const sdl = `
    type Pair @entity {
      id: ID!
      name: String
      reserve: BigDecimal!
      tokens: [Token!]!
      maybe: [Token]
      positions: [Position!]! @derivedFrom(field: "pair")
      note: String @deprecated(reason: "old")
    }
    enum Side { BUY SELL }
    type Token @entity { id: ID! decimals: BigInt! }
    interface Named { id: ID! }
    type Position @entity { id: ID! pair: Pair! other: Int8 @derivedFrom(name: "x") }
  `;

  it('gives each type its fields with type, reference, list, non-null and derivedFrom; other definitions are skipped', () => {
    const m = parseSchemaModel('probe', sdl);
    expect(m.name).toBe('probe');
    expect(m.entities.map((e) => e.name)).toEqual(['Pair', 'Token', 'Position']);
    expect(m.byName.get('Pair')!.fields).toEqual([
      { name: 'id', type: 'ID', ref: false, list: false, nonNull: true },
      { name: 'name', type: 'String', ref: false, list: false, nonNull: false },
      { name: 'reserve', type: 'BigDecimal', ref: false, list: false, nonNull: true },
      { name: 'tokens', type: 'Token', ref: true, list: true, nonNull: true },
      { name: 'maybe', type: 'Token', ref: true, list: true, nonNull: false },
      { name: 'positions', type: 'Position', ref: true, list: true, nonNull: true, derivedFrom: 'pair' },
      { name: 'note', type: 'String', ref: false, list: false, nonNull: false },
    ]);
    expect(m.byName.get('Position')!.field.get('pair')).toEqual({
      name: 'pair',
      type: 'Pair',
      ref: true,
      list: false,
      nonNull: true,
    });
    // A derivedFrom without its `field` argument names nothing.
    expect(m.byName.get('Position')!.field.get('other')).toEqual({
      name: 'other',
      type: 'Int8',
      ref: false,
      list: false,
      nonNull: false,
    });
    expect(m.byName.get('Token')!.field.get('decimals')!.type).toBe('BigInt');
  });

  it('refuses nested lists', () => {
    expect(() => parseSchemaModel('x', 'type A @entity { id: ID! m: [[Int!]!]! }')).toThrow(
      'nested lists are not supported in entity schemas',
    );
  });

  it('drops entities a deployment lacks, and keeps the model as it is when none is dropped', () => {
    const m = parseSchemaModel('probe', sdl);
    expect(withoutEntities(m, new Set())).toBe(m);
    const less = withoutEntities(m, new Set(['Token', 'Nothing']));
    expect(less.name).toBe('probe');
    expect(less.entities.map((e) => e.name)).toEqual(['Pair', 'Position']);
    expect([...less.byName.keys()]).toEqual(['Pair', 'Position']);
    expect(m.entities).toHaveLength(3);
  });

  it('knows only its three schemas', () => {
    expect(() => loadSchemaModel('exchange')).toThrow('unknown schema exchange');
    expect(loadSchemaModel('mine').name).toBe('mine');
  });
});

describe('naming entities', () => {
  it.each([
    ['Pair', 'pair'],
    ['DPPOracle', 'dppOracle'],
    ['DODO', 'dodo'],
    ['LPToken', 'lpToken'],
    ['X', 'x'],
    ['xToken', 'xToken'],
    ['', ''],
  ])('lowerCamel(%s) = %s', (name, want) => expect(lowerCamel(name)).toBe(want));

  it.each([
    ['history', 'histories'],
    ['day', 'days'],
    ['data', 'datas'],
    ['box', 'boxes'],
    ['match', 'matches'],
    ['wish', 'wishes'],
    ['buzz', 'buzzes'],
    ['earnings', 'earnings'],
    ['stats', 'stats'],
    ['token', 'tokens'],
    ['xy', 'xies'],
  ])('pluralize(%s) = %s', (word, want) => expect(pluralize(word)).toBe(want));
});
