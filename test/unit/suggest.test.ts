/** "Did you mean": distances worked out by hand, and the hints the command line adds to yargs' messages. */
import { describe, expect, it } from 'vitest';
import { suggestOptions } from '../../src/cli/main.ts';
import { closest, editDistance } from '../../src/util/suggest.ts';

describe('did you mean', () => {
  it('counts insertions, deletions, substitutions and neighbour swaps as one edit each', () => {
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('chain', 'chains')).toBe(1);
    expect(editDistance('chian', 'chain')).toBe(1);
    expect(editDistance('chian', 'chains')).toBe(2);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('volum_daily', 'volume_daily')).toBe(1);
  });

  it('suggests the nearest name only when it is near enough, the earlier one on a tie', () => {
    expect(closest('chian', ['config', 'chains', 'jobs'])).toBe('chains');
    expect(closest('xyzzy', ['config', 'chains', 'jobs'])).toBeUndefined();
    expect(closest('job', ['jobs', 'log'])).toBe('jobs');
    expect(closest('ab', ['cd'])).toBeUndefined();
    expect(closest('TOP_POOLS', ['top_pools'])).toBe('top_pools');
  });

  it('adds a hint per unknown argument that has a near option, and none otherwise', () => {
    const known = ['help', 'version', 'chains', 'data-dir', 'dataDir', 'h'];
    expect(suggestOptions('Unknown arguments: chian, datadir, zzz', known)).toBe(
      '; --chian: did you mean --chains?; --datadir: did you mean --data-dir?',
    );
    expect(suggestOptions('Unknown argument: zzz', known)).toBe('');
    expect(suggestOptions('Not enough non-option arguments', known)).toBe('');
  });
});
