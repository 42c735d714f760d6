/** "Did you mean": distances worked out by hand, and the hints the command line adds to yargs' messages. */
import { describe, expect, it } from 'vitest';
import { suggestOptions, unknownCommand } from '../../src/cli/main.ts';
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

  it('names a misspelt option once, though yargs names it twice (as typed and as its camelCase twin)', () => {
    const known = ['help', 'dry-run', 'dryRun', 'data-dir', 'dataDir'];
    expect(suggestOptions('Unknown arguments: dry-runn, dryRunn', known)).toBe('; --dry-runn: did you mean --dry-run?');
    // A camelCase word the user typed, with no kebab-case twin in the message, is their own and kept.
    expect(suggestOptions('Unknown argument: dataDirr', known)).toBe('; --dataDirr: did you mean --data-dir?');
  });

  it('names a first word that is no command, with the command it most likely meant', () => {
    expect(unknownCommand(['reprot', '--list'])).toMatch(
      /^unknown command "reprot"; did you mean report\? \(commands: run, /,
    );
    expect(unknownCommand(['stauts'])).toMatch(/^unknown command "stauts"; did you mean status\?/);
    expect(unknownCommand(['xyzzy'])).toMatch(/^unknown command "xyzzy" \(commands: /);
    // Markup or escapes in the word are shown inert.
    expect(unknownCommand(['\x1b[31mrun'])).toMatch(/^unknown command "\\x1b\[31mrun"/);
    for (const fine of [['report', '--list'], ['run'], ['--help'], []]) expect(unknownCommand(fine)).toBeUndefined();
  });
});
