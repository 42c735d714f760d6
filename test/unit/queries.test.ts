import { describe, expect, it } from 'vitest';
import { DATASETS, findDataset } from '../../src/catalog/catalog.ts';
import { pageQuery } from '../../src/export/queries.ts';

describe('page queries', () => {
  it('continue a keyset on (seq, id) with or-branches, never a strict seq_gt alone and never skip', () => {
    const q = pageQuery(findDataset('dodoex.swaps')!, 'swaps', 'seq-next');
    expect(q).toContain('where: { or: [{ timestamp_gt: $seq }, { timestamp: $seq, id_gt: $id }] }');
    expect(q).toContain('block: { number: $block }');
    expect(q).not.toContain('skip');
  });

  it.each(DATASETS.filter((d) => d.kind !== 'list').map((d) => [d.name, d] as const))(
    '%s pins every page to a block and selects every column',
    (_name, d) => {
      for (const shape of d.seq ? (['seq-first', 'seq-next', 'id'] as const) : (['id'] as const)) {
        const q = pageQuery(d, 'rootField', shape);
        expect(q).toContain('rows: rootField(');
        expect(q).toContain('block: { number: $block }');
        for (const c of d.columns) expect(q).toContain(c.select);
      }
    },
  );
});
