/**
 * The event log, given a stream instead of stderr: the lines it writes, read back as JSON or as text, with the key
 * removed, levels filtered and upstream text made inert.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { cause, createEventLog, type EventLogOptions } from '../../src/util/logger.ts';

/** An event log writing into memory, and the lines written so far. */
function capture(o: Omit<EventLogOptions, 'destination'>) {
  const destination = new PassThrough();
  let text = '';
  destination.on('data', (b: Buffer) => {
    text += b.toString('utf8');
  });
  const log = createEventLog({ ...o, destination });
  /** The lines written once `n` of them have arrived (the pretty printer writes through a pipe). */
  const lines = async (n: number) => {
    while (text.split('\n').length - 1 < n) await once(destination, 'data');
    return text.split('\n').slice(0, -1);
  };
  return { log, lines, raw: () => text };
}

describe('the JSON event log', () => {
  it('writes one object per event: its level number, an ISO time, the event and the fields, nothing else', async () => {
    const { log, lines } = capture({ level: 'info', secrets: ['KEY123'] });
    log('task.done', { chain: 'bsc', rows: 5, nested: { a: 1 }, note: 'from https://x/KEY123/q and KEY123 again' });
    log('task.retry', { attempt: 2 }, 'warn');
    log('task.failed', { reason: 'x' }, 'error');
    const [a, b, c] = (await lines(3)).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(a!).sort()).toEqual(['chain', 'event', 'level', 'nested', 'note', 'rows', 'time']);
    expect(a).toMatchObject({ level: 30, event: 'task.done', chain: 'bsc', rows: 5, nested: { a: 1 } });
    expect(a!.note).toBe('from https://x/***/q and *** again');
    expect(a!.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(a!.time as string) - Date.now())).toBeLessThan(60_000);
    expect(b).toMatchObject({ level: 40, event: 'task.retry', attempt: 2 });
    expect(c).toMatchObject({ level: 50, event: 'task.failed', reason: 'x' });
  });

  it('leaves text alone when there is no key', async () => {
    const { log, lines } = capture({ level: 'info', secrets: [] });
    log('e', { s: 'abc' });
    expect(JSON.parse((await lines(1))[0]!)).toMatchObject({ s: 'abc' });
  });

  it('keeps events below its level out', async () => {
    const warn = capture({ level: 'warn', secrets: [] });
    warn.log('a', {});
    warn.log('b', {}, 'debug');
    warn.log('c', {}, 'warn');
    expect((await warn.lines(1)).map((l) => JSON.parse(l).event)).toEqual(['c']);
    const debug = capture({ level: 'debug', secrets: [] });
    debug.log('d', {}, 'debug');
    expect(JSON.parse((await debug.lines(1))[0]!)).toMatchObject({ level: 20, event: 'd' });
    const silent = capture({ level: 'silent', secrets: [] });
    silent.log('e', {}, 'error');
    expect(silent.raw()).toBe('');
  });

  it('escapes every control and bidirectional character, and a reader gets each one back', async () => {
    const { log, lines } = capture({ level: 'info', secrets: [] });
    const hostile = 'a\u001b[31mb\u007fc\u0085d\u202ee\u2028f';
    log('e', { symbol: hostile });
    const [line] = await lines(1);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2028]/);
    expect(line).toContain('a\\u001b[31mb\\u007fc\\u0085d\\u202ee\\u2028f');
    expect(JSON.parse(line!).symbol).toBe(hostile);
  });
});

describe('the pretty event log', () => {
  it('writes a line per event for people: time, level, event, task, fields, error; the key removed, controls visible', async () => {
    const { log, lines } = capture({ level: 'info', secrets: ['KEY123'], format: 'pretty' });
    log('task-done', { dataset: 'dodoex.swaps', chain: 'bsc', chainId: 56, rows: 5, note: 'url KEY123' });
    log('odd', { symbol: 'x\u001b[2Jy', ids: ['a', 'b'], empty: '' });
    log('task-failed', { reason: 'r' }, 'error');
    const [a, b, c] = await lines(3);
    expect(a).toMatch(/^\[\d{2}:\d{2}:\d{2}\] INFO: task-done dodoex\.swaps@bsc rows=5 note="url \*\*\*"$/);
    expect(a).not.toContain('KEY123');
    expect(a).not.toContain('chainId');
    expect(b).toMatch(/^\[\d{2}:\d{2}:\d{2}\] INFO: odd symbol=x\\x1b\[2Jy ids=\["a","b"\] empty=""$/);
    expect(c).toMatch(/^\[\d{2}:\d{2}:\d{2}\] ERROR: task-failed reason=r$/);
  });

  it("gives a task's error without its task's name, and names the first task when others fail alike soon after", async () => {
    const { log, lines } = capture({ level: 'info', secrets: [], format: 'pretty' });
    const fail = (chain: string, why = 'host unreachable') =>
      log(
        'task-failed',
        { dataset: 'list.liquidity', chain, errorClass: 'x', error: `list.liquidity on ${chain}: ${why}` },
        'error',
      );
    fail('bsc');
    fail('polygon');
    fail('avax', 'other');
    const [a, b, c] = await lines(3);
    expect(a).toMatch(/ERROR: task-failed list\.liquidity@bsc errorClass=x: host unreachable$/);
    expect(b).toMatch(
      /ERROR: task-failed list\.liquidity@polygon errorClass=x: the same error as list\.liquidity@bsc$/,
    );
    expect(c).toMatch(/ERROR: task-failed list\.liquidity@avax errorClass=x: other$/);
  });

  it('at warn level, one cause one line: failures alike are left to the summary, whatever route their URL names', async () => {
    const { log, lines, raw } = capture({ level: 'warn', secrets: [], format: 'pretty' });
    const fail = (chain: string, id: number, why = 'no answer from') =>
      log(
        'task-failed',
        {
          dataset: 'dodoex.swaps',
          chain,
          error: `dodoex.swaps on ${chain}: ${why} http://h:1/subgraph/graphql?chainId=${id}&apikey=*** (gave up)`,
        },
        'error',
      );
    fail('bsc', 56);
    fail('polygon', 137);
    fail('avax', 43114);
    fail('eth', 1, 'refused by');
    log('run-done', { failed: 4 }, 'warn');
    const out = await lines(3);
    expect(out[0]).toMatch(/task-failed dodoex\.swaps@bsc: no answer from http:\/\/h:1\/subgraph\/graphql\?chainId=56/);
    expect(out[1]).toMatch(/task-failed dodoex\.swaps@eth: refused by/);
    expect(out[2]).toMatch(/WARN: run-done failed=4$/);
    expect(raw().split('\n')).toHaveLength(4);
    expect(cause('no answer from http://h:1/subgraph/graphql?chainId=56&apikey=*** (gave up)')).toBe(
      'no answer from http://h:1 (gave up)',
    );
  });

  it('wraps lines to the width it is given, every word kept, the following lines indented', async () => {
    const { log, lines } = capture({ level: 'info', secrets: [], format: 'pretty', width: 40 });
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    log('retry', { dataset: 'dodoex.swaps', chain: 'bsc', error: words }, 'warn');
    const out = await lines(3);
    const all = out.join('\n').split('\n');
    for (const l of all) expect(l.length).toBeLessThanOrEqual(40);
    for (const l of all.slice(1)) expect(l).toMatch(/^ {4}\S/);
    expect(all.join(' ').replace(/\s+/g, ' ')).toContain(words);
  });

  it('keeps events below its level out', async () => {
    const { log, lines, raw } = capture({ level: 'warn', secrets: [], format: 'pretty' });
    log('a', {});
    log('b', {}, 'warn');
    expect((await lines(1)).map((l) => / (\w+)$/.exec(l)![1])).toEqual(['b']);
    expect(raw()).not.toContain(': a');
  });
});
