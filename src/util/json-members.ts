/**
 * The members of a JSON object as the bytes that came, not as values: a batched answer's aliases are cut out of its body
 * unparsed, so each reaches the page checker exactly as the upstream wrote it (a repeated key inside a row, which
 * JSON.parse would silently resolve, stays for DuckDB to refuse), and the answer is never held as a tree of objects (a
 * batch of 32 full pages is tens of megabytes, several times that parsed). The scan reads bytes: JSON's structural
 * characters are ASCII, and no byte of a multi-byte UTF-8 character is. It checks the structure it walks (objects,
 * arrays, strings, where members and commas go); the values inside a member are checked by whoever reads it.
 */

/** A member's value: `[start, end)` offsets into the scanned bytes. */
export type Span = readonly [number, number];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipWs(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** The index after the string that starts at `i` (a `"`). */
function skipString(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** The index after the value that starts at `i`; objects and arrays must close in the order they opened. */
function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    const open: number[] = [];
    for (; i < b.length; i++) {
      const ch = b[i]!;
      if (ch === QUOTE) i = skipString(b, i) - 1;
      else if (ch === OPEN_OBJECT || ch === OPEN_ARRAY) open.push(ch === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY);
      else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) {
        if (open.pop() !== ch) throw new SyntaxError('mismatched bracket');
        if (!open.length) return i + 1;
      }
    }
    throw new SyntaxError('unterminated object or array');
  }
  // A number, true, false or null: up to the next delimiter.
  const start = i;
  while (i < b.length && !isSpace(b[i]) && b[i] !== COMMA && b[i] !== CLOSE_OBJECT && b[i] !== CLOSE_ARRAY) i++;
  if (i === start) throw new SyntaxError('expected a value');
  return i;
}

/** The members of the object that starts at `at`, each key (decoded) with its value's span; the first of a repeated key wins. */
function members(b: Uint8Array, at: number): { members: Map<string, Span>; end: number } {
  const out = new Map<string, Span>();
  if (b[at] !== OPEN_OBJECT) throw new SyntaxError('not an object');
  let i = skipWs(b, at + 1);
  if (b[i] === CLOSE_OBJECT) return { members: out, end: i + 1 };
  for (;;) {
    if (b[i] !== QUOTE) throw new SyntaxError('expected a key');
    const keyEnd = skipString(b, i);
    const key = JSON.parse(Buffer.from(b.buffer, b.byteOffset + i, keyEnd - i).toString('utf8')) as string;
    i = skipWs(b, keyEnd);
    if (b[i] !== COLON) throw new SyntaxError('expected a colon');
    const start = skipWs(b, i + 1);
    const end = skipValue(b, start);
    if (!out.has(key)) out.set(key, [start, end]);
    i = skipWs(b, end);
    if (b[i] === CLOSE_OBJECT) return { members: out, end: i + 1 };
    if (b[i] !== COMMA) throw new SyntaxError('expected a comma');
    i = skipWs(b, i + 1);
  }
}

/**
 * The members of the JSON object that `body` holds, each as the span of its value; undefined when the body is not one
 * object (with nothing but white space after it) or its structure is broken.
 */
export function topMembers(body: Uint8Array): Map<string, Span> | undefined {
  try {
    const { members: m, end } = members(body, skipWs(body, 0));
    return skipWs(body, end) === body.length ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The members of the object `body` holds at `span` (an answer's `data`), each as the span of its value: `{"a0":[…],
 * "a1":[…]}` gives `a0` and `a1`. Undefined when the span is not an object or its structure is broken.
 */
export function objectMembers(body: Uint8Array, span: Span): Map<string, Span> | undefined {
  try {
    const { members: m, end } = members(body, span[0]);
    return end === span[1] ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How many elements the JSON array `list` holds (the bytes of a page's rows), counting no further than `most`;
 * undefined when it is not an array or its structure is broken.
 */
export function arrayLength(list: Uint8Array, most = Number.POSITIVE_INFINITY): number | undefined {
  try {
    let i = skipWs(list, 0);
    if (list[i] !== OPEN_ARRAY) return undefined;
    i = skipWs(list, i + 1);
    if (list[i] === CLOSE_ARRAY) return skipWs(list, i + 1) === list.length ? 0 : undefined;
    for (let n = 1; ; n++) {
      if (n >= most) return n;
      i = skipWs(list, skipValue(list, i));
      if (list[i] === CLOSE_ARRAY) return skipWs(list, i + 1) === list.length ? n : undefined;
      if (list[i] !== COMMA) return undefined;
      i = skipWs(list, i + 1);
    }
  } catch {
    return undefined;
  }
}
