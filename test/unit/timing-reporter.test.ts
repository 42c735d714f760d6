/** The timing reporter's closing lines: the tier's time, its slowest tests with their limits, and what used over half. */
import type { File, Suite, Test } from '@vitest/runner';
import { describe, expect, it } from 'vitest';
import { summary, timings } from '../support/timing-reporter.ts';

/** A file of tests as the runner hands it over: each test with its duration, start and limit, some in a describe. */
function fileOf(
  path: string,
  startedAt: number,
  tests: [name: string, ms: number, limitMs: number, suite?: string][],
): File {
  const file = { type: 'suite', name: path, filepath: path, tasks: [], mode: 'run', result: { startTime: startedAt } };
  const f = file as unknown as File;
  (file as { file?: File }).file = f;
  let at = startedAt + 1500;
  const suites = new Map<string, Suite>();
  for (const [name, ms, limitMs, suiteName] of tests) {
    let parent: Suite = f;
    if (suiteName) {
      parent =
        suites.get(suiteName) ??
        (() => {
          const s = { type: 'suite', name: suiteName, tasks: [], mode: 'run', file: f, suite: f } as unknown as Suite;
          f.tasks.push(s);
          suites.set(suiteName, s);
          return s;
        })();
    }
    const t = {
      type: 'test',
      name,
      mode: 'run',
      timeout: limitMs,
      file: f,
      suite: parent,
      result: { state: 'pass', duration: ms, startTime: at },
    } as unknown as Test;
    parent.tasks.push(t);
    at += ms;
  }
  return f;
}

describe('the timing reporter', () => {
  const files = [
    fileOf('/repo/test/a.test.ts', 1_000, [
      ['quick', 20, 60_000, 'group'],
      ['slow', 40_000, 60_000, 'group'],
      ['middling', 9_000, 120_000],
    ]),
    fileOf('/repo/test/b.test.ts', 5_000, [['long but within half', 100_000, 300_000]]),
  ];

  it('names each test with its file and describe blocks, its time and its own limit; a setup is the time to its first test', () => {
    const t = timings(files, '/repo', 60_000);
    expect(t.tests).toEqual([
      { what: 'test/a.test.ts > group > quick', ms: 20, limitMs: 60_000 },
      { what: 'test/a.test.ts > group > slow', ms: 40_000, limitMs: 60_000 },
      { what: 'test/a.test.ts > middling', ms: 9_000, limitMs: 120_000 },
      { what: 'test/b.test.ts > long but within half', ms: 100_000, limitMs: 300_000 },
    ]);
    expect(t.setups).toEqual([
      { what: 'test/a.test.ts (setup)', ms: 1_500, limitMs: 60_000 },
      { what: 'test/b.test.ts (setup)', ms: 1_500, limitMs: 60_000 },
    ]);
  });

  it('lists the slowest first with their limits, then every test over half its limit, the worst share first', () => {
    const lines = summary('unit', 183_400, timings(files, '/repo', 60_000));
    expect(lines[0]).toBe('unit tier: 183.4 s for 4 tests; the ten slowest, each with its limit:');
    expect(lines.slice(1, 5)).toEqual([
      '   100.0 s of 300.0 s  test/b.test.ts > long but within half',
      '    40.0 s of  60.0 s  test/a.test.ts > group > slow',
      '     9.0 s of 120.0 s  test/a.test.ts > middling',
      '     0.0 s of  60.0 s  test/a.test.ts > group > quick',
    ]);
    // 40 s of 60 s is over half; 100 s of 300 s is not.
    expect(lines.slice(-2)).toEqual([
      'unit tier: OVER HALF ITS LIMIT (1):',
      '    40.0 s of  60.0 s  test/a.test.ts > group > slow',
    ]);
  });

  it('says so when everything took under half its limit', () => {
    const calm = [fileOf('/repo/test/c.test.ts', 0, [['fine', 29_000, 60_000]])];
    expect(summary('browser', 31_000, timings(calm, '/repo', 60_000)).at(-1)).toBe(
      "browser tier: every test and every file's setup took under half its limit",
    );
  });
});
