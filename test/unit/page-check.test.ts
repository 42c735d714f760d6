/**
 * Checking a page answer from its body and keeping its rows: on the calling thread and in the page worker. The kept
 * file is compared with the answer's own text, cut by hand; refusals with the mapper's own message for the same rows.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { GarbageError } from '../../src/errors.ts';
import { checkPageAnswer } from '../../src/export/check/page-check.ts';
import { type Checked, InlinePageChecker, WorkerPageChecker } from '../../src/export/check/page-check-runner.ts';
import { mapPage } from '../../src/export/mapper.ts';
import { PROBE_ROWS, probeDataset } from '../support/probes.ts';

const dir = mkdtempSync(join(tmpdir(), 'page-check-'));
let files = 0;
const file = () => join(dir, `page-${++files}.json`);

const probes = probeDataset();
const rows = PROBE_ROWS;

const body = (text: string) => Buffer.from(text, 'utf8');
const compact = (data: unknown) => JSON.stringify({ data });

describe('checking a page answer', () => {
  it('keeps the rows of a compact answer as they came, byte for byte, with their ids and ends', () => {
    const text = compact({ rows });
    const f = file();
    const page = checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: f });
    // The rows' text, cut by hand: after `{"data":{"rows":` and before the closing `}}`.
    const cut = text.slice('{"data":{"rows":'.length, -2);
    expect(readFileSync(f, 'utf8')).toBe(cut);
    expect(page).toEqual({ count: 3, ids: ['a', 'b', rows[2]!.id], first: rows[0], last: rows[2], length: cut.length });
  });

  it('writes the rows out again when the answer is not compact, and keeps the values', () => {
    const text = JSON.stringify({ data: { rows } }, null, 2);
    const f = file();
    const page = checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: f });
    expect(page?.count).toBe(3);
    expect(readFileSync(f, 'utf8')).toBe(JSON.stringify(rows));
  });

  it('keeps the escapes of a compact answer as sent (JSON.stringify would write them otherwise)', () => {
    // `\u00e9` and `\/` are how some servers write é and /; the kept text is the answer's, not a rewrite of it.
    const text = compact({ rows: [rows[0]] }).replace('"id":"a"', '"id":"caf\\u00e9\\/a"');
    const f = file();
    const page = checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: f });
    expect(readFileSync(f, 'utf8')).toContain('"id":"caf\\u00e9\\/a"');
    expect(readFileSync(f, 'utf8')).toBe(text.slice('{"data":{"rows":'.length, -2));
    expect(page?.ids).toEqual(['café/a']);
  });

  it("keeps a compact answer's raw multi-byte text byte for byte, from a body that is a view into a larger buffer", () => {
    // Characters of two, three and four bytes in UTF-8 (one or two UTF-16 units), sent raw, not escaped.
    const text = compact({ rows: [rows[0]] }).replace('"id":"a"', '"id":"é中🦄a"');
    const bytes = Buffer.from(text, 'utf8');
    // The body as the worker may get it: a window of a larger allocation, at an offset.
    const big = new Uint8Array(bytes.length + 11);
    big.set(bytes, 5);
    const f = file();
    const page = checkPageAnswer({ ds: probes, chainId: 56, body: big.subarray(5, 5 + bytes.length), file: f });
    const cut = text.slice('{"data":{"rows":'.length, -2);
    expect(readFileSync(f).equals(Buffer.from(cut, 'utf8'))).toBe(true);
    expect(page?.ids).toEqual(['é中🦄a']);
    // The length is counted as JavaScript counts (the emoji is two units): no row of the file is longer.
    expect(page?.length).toBe(cut.length);
  });

  it('writes the rows out again when a compact answer is followed by white space, and keeps the values', () => {
    const text = `${compact({ rows })}\n`;
    const f = file();
    expect(checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: f })?.count).toBe(3);
    expect(readFileSync(f, 'utf8')).toBe(JSON.stringify(rows));
  });

  it('keeps an empty page', () => {
    const f = file();
    expect(checkPageAnswer({ ds: probes, chainId: 56, body: body(compact({ rows: [] })), file: f })).toEqual({
      count: 0,
      ids: [],
      length: 2,
    });
    expect(readFileSync(f, 'utf8')).toBe('[]');
  });

  it.each([
    ['GraphQL errors', JSON.stringify({ errors: [{ message: 'Store error' }] })],
    ['errors beside data', JSON.stringify({ data: { rows }, errors: [{ message: 'x' }] })],
    ['extensions beside data', JSON.stringify({ data: { rows }, extensions: { a: 1 } })],
    ['another field beside rows', JSON.stringify({ data: { rows, other: [] } })],
    ['rows that are not a list', JSON.stringify({ data: { rows: null } })],
    ['no data', JSON.stringify({ data: null })],
    ['not JSON', '{"data":{"rows":[}'],
    ['a list', '[1]'],
    ['null', 'null'],
    ['cut short', compact({ rows }).slice(0, -1)],
  ])('leaves an answer with %s to the caller, writing nothing', (_, text) => {
    const f = file();
    expect(checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: f })).toBeUndefined();
    expect(existsSync(f)).toBe(false);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a BigDecimal as a number', { amount: 1.5 }],
    ['a reference without its id', { pair: {} }],
    ['a list of strings where references are selected', { tokens: ['t1'] }],
    ['a missing field', { tags: undefined }],
    ['an Int that is not whole', { n: 1.5 }],
    ['a null where the schema says non-null', { timestamp: null }],
  ])('refuses %s as the mapper does, writing nothing', (_, over) => {
    const bad = [rows[0], { ...rows[1], ...over }];
    const f = file();
    const mapped = (() => {
      try {
        mapPage(probes, 56, JSON.parse(JSON.stringify(bad)));
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(mapped).toMatch(/^upstream sent invalid data for dodoex.probes on bsc/);
    expect(() => checkPageAnswer({ ds: probes, chainId: 56, body: body(compact({ rows: bad })), file: f })).toThrow(
      mapped,
    );
    expect(existsSync(f)).toBe(false);
  });
});

describe('the page checkers', () => {
  const worker = new WorkerPageChecker();
  afterAll(() => worker.close());
  const swaps = findDataset('dodoex.swaps')!;

  it.each([
    ['on the calling thread', new InlinePageChecker()],
    ['in the page worker', worker],
  ])(
    '%s: check a page, give back an answer that is not one, and refuse garbage with its message',
    async (_, checker) => {
      const f = file();
      const text = compact({ rows });
      const kept = (await checker.check({ ds: probes, chainId: 56, body: body(text), file: f })) as Checked;
      expect(kept).toEqual({ page: checkPageAnswer({ ds: probes, chainId: 56, body: body(text), file: file() }) });
      expect(readFileSync(f, 'utf8')).toBe(text.slice('{"data":{"rows":'.length, -2));

      const errors = JSON.stringify({ errors: [{ message: 'Store error: x' }] });
      const back = (await checker.check({ ds: probes, chainId: 56, body: body(errors), file: file() })) as {
        body: Uint8Array;
      };
      expect(Buffer.from(back.body).toString('utf8')).toBe(errors);

      const wrong = compact({ rows: [{ ...rows[0], timestamp: 100 }] });
      const e = await checker.check({ ds: probes, chainId: 56, body: body(wrong), file: file() }).catch((x) => x);
      expect(e).toBeInstanceOf(GarbageError);
      expect(e.message).toBe(
        'upstream sent invalid data for dodoex.probes on bsc (chain 56), field "timestamp": expected a BigInt as a decimal string, got 100. The upstream schema may have changed: run `pool-export schema check`',
      );
      expect(e).toMatchObject({ dataset: 'dodoex.probes', chainId: 56, field: 'timestamp' });
    },
  );

  it('leaves every other small Buffer whole when it moves one out of Node’s shared pool to the worker', async () => {
    // Small Buffers share one pool; a body among them is copied before it goes, or the worker would read the whole pool
    // (Node copies the pool rather than move it) from its start: its neighbours' bytes, then the body's.
    const before = Buffer.from('a neighbour in the pool');
    const small = Buffer.from(compact({ rows: [] }));
    const after = Buffer.from('another neighbour');
    expect(small.buffer).toBe(before.buffer);
    const page = await worker.check({ ds: swaps, chainId: 56, body: small, file: file() });
    expect(page).toEqual({ page: { count: 0, ids: [], length: 2 } });
    expect([before.toString(), small.toString(), after.toString()]).toEqual([
      'a neighbour in the pool',
      compact({ rows: [] }),
      'another neighbour',
    ]);
  });

  it('checks pages of several datasets at once, each with its own columns', async () => {
    const many = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        worker.check({
          ds: i % 2 ? probes : swaps,
          chainId: 56,
          body: body(compact({ rows: i % 2 ? rows.slice(0, 1 + (i % 3)) : [] })),
          file: file(),
        }),
      ),
    );
    expect(many.map((c) => ('page' in c ? c.page.count : -1))).toEqual([0, 2, 0, 1, 0, 3, 0, 2, 0, 1, 0, 3]);
  });

  it('fails a page the worker cannot keep with the worker’s own error, not as garbage', async () => {
    const checker = new WorkerPageChecker();
    const nowhere = join(dir, 'no-such-folder', 'page.json');
    const e = await checker
      .check({ ds: probes, chainId: 56, body: body(compact({ rows })), file: nowhere })
      .catch((x: unknown) => x);
    await checker.close();
    expect(e).not.toBeInstanceOf(GarbageError);
    expect((e as Error).message).toMatch(/^ENOENT: no such file or directory, open '.*no-such-folder/);
  });

  it('closes at once when it never started a worker', async () => {
    await expect(new WorkerPageChecker().close()).resolves.toBeUndefined();
  });

  it('starts another worker for the next page when its worker has ended, and fails the pages held at close', async () => {
    const checker = new WorkerPageChecker();
    const first = await checker.check({ ds: probes, chainId: 56, body: body(compact({ rows })), file: file() });
    expect('page' in first).toBe(true);
    // The worker ends (as a crash would): the next page goes to a new one.
    const w = (checker as unknown as { worker: { terminate(): Promise<number> } }).worker;
    await w.terminate();
    const again = await checker.check({ ds: probes, chainId: 56, body: body(compact({ rows })), file: file() });
    expect('page' in again && again.page.count).toBe(3);
    // A page still held when the checker closes fails (its answer cannot have been read before close ran).
    const held = checker
      .check({ ds: probes, chainId: 56, body: body(compact({ rows })), file: file() })
      .catch((e) => e);
    await checker.close();
    expect(((await held) as Error).message).toBe('the page worker was stopped');
  });
});
