/** `redact`: every key, the main one and the routes' own, replaced by `***`, and nothing else touched. */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/util/redact.ts';

describe('redact', () => {
  it('replaces every occurrence of every key, one key or a list of them', () => {
    expect(redact('k1 then k2 then k1', ['k1', 'k2'])).toBe('*** then *** then ***');
    expect(redact('?apikey=MAIN&x=MAIN', 'MAIN')).toBe('?apikey=***&x=***');
    const key = '5a4db0c5e1f0d1e2a3b4c5d6e7f80912';
    expect(redact(`url?apikey=${key}, within${key}word`, key)).toBe('url?apikey=***, within***word');
  });

  it('masks a short key only where it stands alone, not inside every word that holds its letters', () => {
    expect(redact('waiting under way for a: ?apikey=a&b=a "a"', 'a')).toBe(
      'waiting under way for ***: ?apikey=***&b=*** "***"',
    );
    expect(redact('secret x+y=1 and (x+y) but not x+yz', 'x+y')).toBe('secret ***=1 and (***) but not x+yz');
    expect(redact('key abc123, abc1234 and zabc123', 'abc123')).toBe('key ***, abc1234 and zabc123');
    expect(redact('https://x/abc123/q?k=abc123.', 'abc123')).toBe('https://x/***/q?k=***.');
  });

  it('ignores an empty key (no key configured) instead of starring between every character', () => {
    expect(redact('abc', '')).toBe('abc');
    expect(redact('a b c', ['', 'b'])).toBe('a *** c');
    expect(redact('abc', [])).toBe('abc');
  });
});
