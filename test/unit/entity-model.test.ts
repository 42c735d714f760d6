import { describe, expect, it } from 'vitest';
import { apiSdl } from '../../src/sandbox/api-schema.ts';
import { rootNames } from '../../src/sandbox/naming.ts';
import { loadSchemaModel } from '../../src/schemas/entity-model.ts';

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
