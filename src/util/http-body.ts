/**
 * HTTP bodies read with a byte budget: an answer that never ends (or is simply huge) costs at most the budget in
 * memory, never the machine. Every HTTP body pool-export reads goes through here: upstream answers, their error pages,
 * and the sandbox's control API.
 */
import { BodyTooLargeError } from '../errors.ts';

/** Bytes for reading: `32 MiB`, `64 KiB`, `812 bytes`. */
export function bytesText(n: number): string {
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

/**
 * The body's bytes, read as a stream. Past `budget` bytes the stream is cancelled (which closes the connection) and
 * BodyTooLargeError is thrown, or, with `truncate`, the bytes read so far are returned. A `content-length` above the
 * budget fails before anything is read.
 */
export async function readBody(res: Response, budget: number, opts: { truncate?: boolean } = {}): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (!opts.truncate && Number.isFinite(declared) && declared > budget) {
    await res.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(
      budget,
      `the answer exceeded ${bytesText(budget)} (its content-length is ${declared.toLocaleString('en-US')} bytes)`,
    );
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > budget) {
      await reader.cancel().catch(() => undefined);
      if (!opts.truncate)
        throw new BodyTooLargeError(
          budget,
          `the answer exceeded ${bytesText(budget)} (${(size + value.byteLength).toLocaleString('en-US')} bytes received when reading stopped)`,
        );
      chunks.push(value.subarray(0, budget - size));
      size = budget;
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return Buffer.concat(chunks, size);
}

/** The body as UTF-8 text, within the budget. */
export async function readText(res: Response, budget: number, opts: { truncate?: boolean } = {}): Promise<string> {
  return (await readBody(res, budget, opts)).toString('utf8');
}

/** The body as JSON, within the budget. */
export async function readJson<T>(res: Response, budget: number): Promise<T> {
  return JSON.parse(await readText(res, budget)) as T;
}
