/** `redact`: every key, the main one and the routes' own, replaced by `***`, and nothing else touched. */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/util/redact.ts';

describe('redact', () => {
  it('replaces every occurrence of every key, one key or a list of them', () => {
    expect(redact('k1 then k2 then k1', ['k1', 'k2'])).toBe('*** then *** then ***');
    expect(redact('?apikey=MAIN&x=MAIN', 'MAIN')).toBe('?apikey=***&x=***');
  });

  it('ignores an empty key (no key configured) instead of starring between every character', () => {
    expect(redact('abc', '')).toBe('abc');
    expect(redact('abc', ['', 'b'])).toBe('a***c');
    expect(redact('abc', [])).toBe('abc');
  });
});
