/** Word-wrapping of prose for a terminal. */

/**
 * `text` as lines of at most `width` characters: the first line starts after `first` (already printed, or a label),
 * the others with `indent` spaces. Words longer than a line stay whole on a line of their own; nothing is dropped.
 */
export function wrap(
  text: string,
  opts: { readonly width: number; readonly first?: string; readonly indent: number },
): string {
  const lines: string[] = [];
  let line = opts.first ?? '';
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const sep = empty ? '' : ' ';
    if (!empty && [...line].length + 1 + [...word].length > opts.width) {
      lines.push(line);
      line = ' '.repeat(opts.indent) + word;
    } else line += sep + word;
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}
