import { describe, expect, it } from 'vitest';
import { BodyTooLargeError } from '../../src/errors.ts';
import { readBody, readText } from '../../src/util/http-body.ts';

/** A response whose body comes in the given chunks, then (unless `endless`) ends; `pulled` counts chunks read. */
function response(chunks: string[], opts: { endless?: boolean; headers?: Record<string, string> } = {}) {
  const state = { pulled: 0, cancelled: false };
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      state.pulled++;
      if (i < chunks.length) c.enqueue(new TextEncoder().encode(chunks[i++]!));
      else if (opts.endless) c.enqueue(new Uint8Array(1024).fill(0x20));
      else c.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { res: new Response(body, { headers: opts.headers ?? {} }), state };
}

describe('bodies read with a budget', () => {
  it('returns a body within the budget whole, multi-byte characters split across chunks intact', async () => {
    const { res } = response(['{"a":"日', '本🦄', '"}']);
    expect(await readText(res, 1024)).toBe('{"a":"日本🦄"}');
  });

  it('stops an endless body at the budget, cancels it, and names the size', async () => {
    const { res, state } = response([], { endless: true });
    const err = await readBody(res, 64 * 1024).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect((err as Error).message).toBe('the answer exceeded 64 KiB (66,560 bytes received when reading stopped)');
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThanOrEqual(66);
  });

  it('refuses a declared content-length over the budget before reading', async () => {
    const { res, state } = response(['x'.repeat(10)], { headers: { 'content-length': '5000000' } });
    await expect(readBody(res, 1024 ** 2)).rejects.toThrow(
      'the answer exceeded 1 MiB (its content-length is 5,000,000 bytes)',
    );
    expect(state.pulled).toBeLessThanOrEqual(1);
  });

  it('keeps the first bytes of an error page when asked to truncate', async () => {
    const { res, state } = response(['<html>', 'x'.repeat(5000)], { endless: true });
    const text = await readText(res, 100, { truncate: true });
    expect(text).toBe(`<html>${'x'.repeat(94)}`);
    expect(state.cancelled).toBe(true);
  });
});
