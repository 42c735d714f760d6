import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiSdl } from '../../src/sandbox/api-schema.ts';
import { rootNames } from '../../src/sandbox/naming.ts';
import {
  loadSchemaModel,
  lowerCamel,
  parseSchemaModel,
  pluralize,
  SchemaModelError,
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

/**
 * A subgraph of any schema: the parts of graph-node's schema language beyond DODO's (graphprotocol/graph-node f27eb5f2,
 * `graph/src/schema/input/mod.rs` for `@entity(immutable, timeseries)`, `@aggregation` and `@aggregate`;
 * `graph/src/schema/api.rs` test `aggregation` for the shape of an aggregation over a timeseries).
 */
describe('reading any subgraph schema', () => {
  const fixture = readFileSync(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url), 'utf8');
  const model = parseSchemaModel('pools', fixture);

  it('keeps the stored entities with their immutability, enums, interfaces and derived fields', () => {
    expect(model.entities.map((e) => e.name)).toEqual([
      'Factory',
      'Token',
      'Pool',
      'Swap',
      'Mint',
      'PriceTick',
      'Account',
    ]);
    const e = (n: string) => model.byName.get(n)!;
    expect([e('Factory').immutable, e('Token').immutable, e('Swap').immutable]).toEqual([undefined, undefined, true]);
    expect(e('PriceTick')).toMatchObject({ immutable: true, timeseries: true });
    expect(e('Swap').interfaces).toEqual(['Event']);
    expect(model.interfaces?.get('Event')?.implementers).toEqual(['Swap', 'Mint']);
    expect(e('Pool').field.get('lastEvent')).toMatchObject({ ref: true, type: 'Event', list: false });
    expect(e('Pool').field.get('recentEvents')).toMatchObject({ ref: true, type: 'Event', list: true });
    expect(model.enums?.get('PoolKind')).toEqual(['CONSTANT_PRODUCT', 'CONCENTRATED', 'STABLE']);
    expect(e('Pool').field.get('kind')).toMatchObject({ type: 'PoolKind', enum: true, ref: false, nonNull: true });
    expect(e('Swap').field.get('kinds')).toMatchObject({ enum: true, ref: false, list: true, nonNull: false });
    expect(e('Pool').field.get('token0')).toMatchObject({ ref: true, type: 'Token' });
    expect(e('Pool').field.get('swaps')).toMatchObject({ ref: true, list: true, derivedFrom: 'pool' });
    expect(e('PriceTick').field.get('id')?.type).toBe('Int8');
  });

  it('reads an aggregation over a timeseries apart from the stored entities', () => {
    const m = parseSchemaModel(
      'agg',
      `type Data @entity(timeseries: true) { id: Int8! timestamp: Timestamp! token: Bytes! price: BigDecimal! }
       type Stats @aggregation(intervals: ["hour", "day"], source: "Data") {
         id: Int8! timestamp: Timestamp! token: Bytes!
         sum: BigDecimal! @aggregate(fn: "sum", arg: "price")
         total: BigDecimal! @aggregate(fn: "sum", arg: "price", cumulative: true)
         count: Int8! @aggregate(fn: "count")
       }`,
    );
    expect(m.entities.map((e) => e.name)).toEqual(['Data']);
    const stats = m.aggregations![0]!;
    expect(stats.aggregation).toEqual({ source: 'Data', intervals: ['hour', 'day'] });
    expect(stats.field.get('sum')?.aggregate).toEqual({ fn: 'sum', arg: 'price', cumulative: false });
    expect(stats.field.get('total')?.aggregate).toEqual({ fn: 'sum', arg: 'price', cumulative: true });
    expect(stats.field.get('count')?.aggregate).toEqual({ fn: 'count', cumulative: false });
    expect(stats.field.get('token')?.aggregate).toBeUndefined();
  });

  it.each([
    [
      'an unknown scalar',
      'type Pool @entity { id: ID! price: Money! }',
      /^field Pool\.price of bad has type Money, which is neither a scalar of graph-node \(ID, String, Bytes, .*\) nor an entity, enum or interface of the schema: correct the type, or add its definition/,
    ],
    [
      'SDL that does not parse',
      'type Pool @entity { id: ID! ',
      /^the schema of bad does not parse at line 1, column 29: Syntax Error: Expected Name, found <EOF>\.$/,
    ],
    [
      'an aggregation without intervals',
      'type S @aggregation(source: "D") { id: Int8! }',
      /^aggregation S of bad needs @aggregation\(source: "<timeseries>", intervals: \["hour", "day"\]\)$/,
    ],
  ])('refuses %s with one line naming it', (_, sdl, message) => {
    let error: unknown;
    try {
      parseSchemaModel('bad', sdl);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaModelError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('serves enums with their filters, and what each entity implements', () => {
    const sdl = apiSdl(model);
    expect(sdl).toContain('enum PoolKind { CONSTANT_PRODUCT CONCENTRATED STABLE }');
    expect(sdl).toMatch(/type Swap implements Event \{/);
    expect(sdl).toMatch(/interface Event \{/);
    const filter = /input Pool_filter \{([^}]*)\}/.exec(sdl)![1]!;
    // graph-node `api.rs` `field_enum_filter_input_values`: "", _not, _in, _not_in for an enum.
    expect(filter.match(/\bkind\w*:/g)).toEqual(['kind:', 'kind_not:', 'kind_in:', 'kind_not_in:']);
  });
});
