/**
 * The members of a JSON object as the text that came, not as values: a batched answer's aliases are cut out of its body
 * unparsed, so each reaches the page checker exactly as the upstream wrote it (a repeated key inside a row, which
 * JSON.parse would silently resolve, stays for DuckDB to refuse).
 */

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipWs(s: string, i: number): number {
  while (i < s.length && WS.has(s.charCodeAt(i))) i++;
  return i;
}

/** The index after the string that starts at `i` (a `"`). */
function skipString(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** The index after the value that starts at `i`. */
function skipValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) return skipString(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      if (ch === 0x22) i = skipString(s, i) - 1;
      else if (ch === 0x7b || ch === 0x5b) depth++;
      else if (ch === 0x7d || ch === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new SyntaxError('unterminated object or array');
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < s.length && !WS.has(s.charCodeAt(i)) && !',}]'.includes(s[i]!)) i++;
  return i;
}

/** The members of the object that starts at `i`, each key (decoded) with its value's text; the first of a repeated key wins. */
function members(s: string, i: number): Map<string, string> {
  const out = new Map<string, string>();
  if (s.charCodeAt(i) !== 0x7b) throw new SyntaxError('not an object');
  i = skipWs(s, i + 1);
  if (s.charCodeAt(i) === 0x7d) return out;
  for (;;) {
    const keyEnd = skipString(s, i);
    const key = JSON.parse(s.slice(i, keyEnd)) as string;
    i = skipWs(s, keyEnd);
    if (s.charCodeAt(i) !== 0x3a) throw new SyntaxError('expected a colon');
    const start = skipWs(s, i + 1);
    const end = skipValue(s, start);
    if (!out.has(key)) out.set(key, s.slice(start, end));
    i = skipWs(s, end);
    if (s.charCodeAt(i) === 0x7d) return out;
    if (s.charCodeAt(i) !== 0x2c) throw new SyntaxError('expected a comma');
    i = skipWs(s, i + 1);
  }
}

/**
 * The members of a JSON object's `data` member, each as its text: `{"data":{"a0":[…],"a1":[…]}}` gives `a0` and `a1`.
 * Undefined when the text is not valid JSON, or not an object whose `data` is an object (errors beside it are the
 * caller's to look for: `topMembers`).
 */
export function dataMembers(text: string): Map<string, string> | undefined {
  const top = topMembers(text);
  const data = top?.get('data');
  if (data === undefined || data.charCodeAt(0) !== 0x7b) return undefined;
  return members(data, 0);
}

/** The members of the JSON object `text` as their texts; undefined when it is not valid JSON or not an object. */
export function topMembers(text: string): Map<string, string> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  } catch {
    return undefined;
  }
  return members(text, skipWs(text, 0));
}
