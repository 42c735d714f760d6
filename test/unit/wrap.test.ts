/** Word-wrapping: lines within the width, words whole, nothing lost (checked by joining the words back). */
import { describe, expect, it } from 'vitest';
import { wrap } from '../../src/util/wrap.ts';

describe('wrap', () => {
  it('breaks between words within the width, the first line after its label, the others indented', () => {
    expect(wrap('one two three four', { width: 12, first: 'x: ', indent: 3 })).toBe('x: one two\n   three\n   four');
    expect(wrap('short', { width: 80, indent: 4 })).toBe('short');
  });

  it('keeps a word longer than the width whole on its own line, and drops no word', () => {
    const text = 'a verylongwordthatdoesnotfit b c';
    const out = wrap(text, { width: 10, first: '- ', indent: 2 });
    expect(out.split('\n')).toEqual(['- a', '  verylongwordthatdoesnotfit', '  b c']);
    expect(out.replace(/^- /, '').split(/\s+/).filter(Boolean).join(' ')).toBe(text);
  });
});
