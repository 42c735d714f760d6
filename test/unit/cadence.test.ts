/** When a bucket lake's publish is due (`src/bucket/cadence.ts`): the expected answers are written out by hand. */
import { describe, expect, it } from 'vitest';
import { publishDue } from '../../src/bucket/cadence.ts';

const NOW = 1_800_000_000_000;

describe('a publish of a bucket lake', () => {
  it('is due every time with no cadence, and the first time whatever it is', () => {
    expect(publishDue({ publishedAt: NOW }, 0, NOW)).toEqual({ due: true, inSecs: 0 });
    expect(publishDue({}, 600, NOW)).toEqual({ due: true, inSecs: 0 });
  });

  it('waits out the cadence from the start of the run that last published, and is due once it has passed', () => {
    expect(publishDue({ publishedAt: NOW - 60_000 }, 600, NOW)).toEqual({ due: false, inSecs: 540 });
    expect(publishDue({ publishedAt: NOW - 599_500 }, 600, NOW)).toEqual({ due: false, inSecs: 0.5 });
    expect(publishDue({ publishedAt: NOW - 600_000 }, 600, NOW)).toEqual({ due: true, inSecs: 0 });
    expect(publishDue({ publishedAt: NOW - 3_600_000 }, 600, NOW)).toEqual({ due: true, inSecs: 0 });
  });

  it('is due at once after a publish that did not end, whatever the cadence', () => {
    expect(publishDue({ publishedAt: NOW - 1000, publishing: true }, 3600, NOW)).toEqual({ due: true, inSecs: 0 });
  });
});
