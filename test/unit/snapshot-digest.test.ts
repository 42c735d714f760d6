/**
 * The digest that lets a snapshot equal to the stored one be found without reading a row (`store/snapshot-digest.ts`).
 * The expected digest was computed apart from the code: `python3 -c "import hashlib;
 * print(hashlib.sha256(b'{\"id\":\"a\"}\n{\"id\":\"b\"}\n').hexdigest())"`.
 */
import { describe, expect, it } from 'vitest';
import { snapshotDigest } from '../../src/store/snapshot-digest.ts';

describe('a snapshot digest', () => {
  it('is the SHA-256 of the rows’ JSON lines sorted, each ended by a newline, whatever order they came in', () => {
    const want = 'aed840b5eabc1e092391c784bf8a6ae67a7c536cf1a521689af490f6ea9ac42b';
    expect(snapshotDigest(['{"id":"a"}', '{"id":"b"}'])).toBe(want);
    expect(snapshotDigest(['{"id":"b"}', '{"id":"a"}'])).toBe(want);
  });

  it('tells rows apart however their text would run together: the line ends are part of it', () => {
    expect(snapshotDigest(['ab', 'c'])).not.toBe(snapshotDigest(['a', 'bc']));
    expect(snapshotDigest(['a'])).not.toBe(snapshotDigest(['a', '']));
  });
});
