import { describe, expect, it } from 'vitest';
import { apiSdl } from '../../src/sandbox/api-schema.ts';
import { loadSchemaModel, lowerCamel } from '../../src/schemas/entity-model.ts';

describe('entity model', () => {
  it('has every entity of the three schemas', () => {
    expect(loadSchemaModel('dodoex').entities).toHaveLength(32);
    expect(loadSchemaModel('token').entities).toHaveLength(5);
    expect(loadSchemaModel('mine-v3').entities).toHaveLength(3);
  });

  it.each([
    ['DodoZoo', 'dodoZoo', 'dodoZoos'],
    ['OrderHistory', 'orderHistory', 'orderHistories'],
    ['PairDayData', 'pairDayData', 'pairDayDatas'],
    ['MaintainerEarnings', 'maintainerEarnings', 'maintainerEarnings_collection'],
    ['DPPOracleAdmin', 'dppOracleAdmin', 'dppOracleAdmins'],
    ['MaintainerFeeTx', 'maintainerFeeTx', 'maintainerFeeTxes'],
  ])('names the roots of %s like graph-node', (name, single, plural) => {
    const e = loadSchemaModel('dodoex').byName.get(name)!;
    expect([e.single, e.plural]).toEqual([single, plural]);
    expect(lowerCamel(name)).toBe(single);
  });

  it('generates the filter suffixes per type', () => {
    const sdl = apiSdl(loadSchemaModel('dodoex'));
    const swapFilter = /input Swap_filter \{([^}]*)\}/.exec(sdl)![1]!;
    for (const f of ['id_gt', 'hash_contains_nocase', 'timestamp_lte', 'from_not_contains', 'pair_', 'pair_starts_with', '_change_block', 'or', 'and']) {
      expect(swapFilter).toMatch(new RegExp(`\\b${f}:`));
    }
    expect(swapFilter).not.toMatch(/\bid_contains:/);
    expect(swapFilter).not.toMatch(/\bfrom_starts_with:/);
    expect(/enum Swap_orderBy \{([^}]*)\}/.exec(sdl)![1]).toContain('pair__updatedAt');
  });
});
