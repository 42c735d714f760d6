/**
 * Upstream text made inert for people to read: control and bidirectional characters as visible escapes, so that a token
 * symbol can neither drive the terminal nor reorder a line. Apart from `display.ts` (widths and numbers) so that the
 * command line's own error messages need no more than this at start.
 */

/**
 * C0 controls, DEL, C1 controls, and the bidirectional controls (embeddings and overrides U+202A–U+202E, isolates
 * U+2066–U+2069, the marks U+200E/U+200F and U+061C): each is shown as an escape.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The visible escape of one unsafe character: `\x1b`, `\u202e`. */
function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The text with every control and bidirectional character shown as a visible escape. */
export function inert(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * Characters JSON leaves raw that a terminal may obey or reorder: DEL, C1 controls, bidirectional controls, and the
 * line and paragraph separators. (JSON.stringify already escapes C0.)
 */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Serialized JSON with those characters written as `\uXXXX` escapes. They can only occur inside strings, where an
 * escape means the same character: every JSON reader gets exactly the bytes that were stored.
 */
export function jsonSafe(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
