/**
 * `schema check`'s comparison and the probe's root fields, on a small schema and introspection answers written out by
 * hand in graph-node's shapes (graph-node f27eb5f, graphql/src/schema/api.rs: `pairs` before v0.35, `pair_collection`
 * after; the gateway has no single-row fields).
 */
import { describe, expect, it } from 'vitest';
import { parseSchemaModel } from '../../src/schemas/entity-model.ts';
import { collectionRoots, endpointInfo, type ProbeAnswer } from '../../src/upstream/endpoint-probe.ts';
import { type Introspected, schemaDrift, type TypeRef, typeText } from '../../src/upstream/schema-drift.ts';

const SDL = `
type Pair @entity {
  id: ID!
  baseToken: Token!
  volumeUSD: BigDecimal!
  traders: [Token!]!
  note: String
}
type Token @entity {
  id: ID!
  symbol: String!
}
type Gone @entity {
  id: ID!
}`;
const model = parseSchemaModel('test', SDL);

const named = (name: string, kind = 'SCALAR'): TypeRef => ({ kind, name, ofType: null });
const nonNull = (t: TypeRef): TypeRef => ({ kind: 'NON_NULL', name: null, ofType: t });
const list = (t: TypeRef): TypeRef => ({ kind: 'LIST', name: null, ofType: t });

/** The upstream: Pair.volumeUSD is now a String, Pair.note is gone, Pair.fee is new, Gone is missing, Bundle is new. */
const upstream: Introspected = {
  __schema: {
    types: [
      {
        name: 'Pair',
        kind: 'OBJECT',
        fields: [
          { name: 'id', type: nonNull(named('ID')) },
          { name: 'baseToken', type: nonNull(named('Token', 'OBJECT')) },
          { name: 'volumeUSD', type: nonNull(named('String')) },
          { name: 'traders', type: nonNull(list(nonNull(named('Token', 'OBJECT')))) },
          { name: 'fee', type: named('BigInt') },
        ],
      },
      {
        name: 'Token',
        kind: 'OBJECT',
        fields: [
          { name: 'id', type: nonNull(named('ID')) },
          { name: 'symbol', type: named('String') },
        ],
      },
      { name: 'Bundle', kind: 'OBJECT', fields: [{ name: 'id', type: nonNull(named('ID')) }] },
      { name: 'Query', kind: 'OBJECT', fields: [] },
      { name: '_Meta_', kind: 'OBJECT', fields: [] },
      { name: 'Pair_filter', kind: 'INPUT_OBJECT', fields: null },
    ],
  },
};

describe('schema drift', () => {
  it('writes introspected types as GraphQL text', () => {
    expect(typeText(nonNull(list(nonNull(named('Token', 'OBJECT')))))).toBe('[Token!]!');
    expect(typeText(list(named('Int')))).toBe('[Int]');
    expect(typeText({ kind: 'SCALAR', name: null })).toBe('?');
  });

  it('a changed type or a gone field the catalog reads is breaking; unread ones, new fields and types are notices', () => {
    const read = new Map([
      ['Pair', new Set(['id', 'volumeUSD', 'baseToken', 'traders'])],
      ['Token', new Set(['id'])],
    ]);
    expect(schemaDrift(model, upstream, read)).toEqual([
      { severity: 'breaking', what: 'field Pair.volumeUSD changed type: BigDecimal! → String!' },
      { severity: 'notice', what: 'field Pair.note (String) is gone' },
      { severity: 'notice', what: 'field Pair.fee (BigInt) is new; the catalog does not read it' },
      { severity: 'notice', what: 'field Token.symbol changed type: String! → String' },
      { severity: 'unavailable', what: 'type Gone is not in this deployment: its dataset is skipped here' },
      { severity: 'notice', what: 'type Bundle is new; the catalog does not export it' },
    ]);
    const readAll = new Map([['Pair', new Set(['note'])]]);
    expect(schemaDrift(model, upstream, readAll)).toContainEqual({
      severity: 'breaking',
      what: 'field Pair.note (String) is gone',
    });
  });
});

describe('the endpoint probe', () => {
  const fields = (names: [string, TypeRef][]) => names.map(([name, type]) => ({ name, type }));
  const pairList = nonNull(list(nonNull(named('Pair', 'OBJECT'))));

  it('finds each entity collection by its return type, under either naming rule, first field winning', () => {
    expect(
      collectionRoots(
        fields([
          ['pair', named('Pair', 'OBJECT')],
          ['pairs', pairList],
          ['maintainerEarnings_collection', nonNull(list(nonNull(named('MaintainerEarnings', 'OBJECT'))))],
          ['pairsAgain', pairList],
          ['_meta', named('_Meta_', 'OBJECT')],
          ['_hidden', pairList],
          ['names', list(named('String'))],
          ['loose', list(named('Token', 'OBJECT'))],
        ]),
      ),
    ).toEqual(
      new Map([
        ['Pair', 'pairs'],
        ['MaintainerEarnings', 'maintainerEarnings_collection'],
        ['Token', 'loose'],
      ]),
    );
  });

  it('reads the head, the indexing-error flag and whether _change_block filters exist', () => {
    const answer = (changeBlock: { name: string } | null): ProbeAnswer => ({
      _meta: { block: { number: 42, hash: '0xab', timestamp: 1700000000 }, deployment: 'Qm1', hasIndexingErrors: true },
      __schema: { queryType: { fields: fields([['pairs', pairList]]) } },
      changeBlock,
    });
    const info = endpointInfo(answer({ name: 'BlockChangedFilter' }));
    expect(info).toEqual({
      head: { number: 42, hash: '0xab', timestamp: 1700000000 },
      deployment: 'Qm1',
      hasIndexingErrors: true,
      roots: new Map([['Pair', 'pairs']]),
      changeBlock: true,
    });
    expect(endpointInfo(answer(null)).changeBlock).toBe(false);
    expect(endpointInfo(answer({ name: 'Other' })).changeBlock).toBe(false);
  });
});
