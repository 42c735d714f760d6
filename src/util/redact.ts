/** Keys kept out of everything shown, logged or stored. */

/**
 * Below this length a key is masked only where it stands alone, between characters that cannot be part of a key
 * (`?apikey=ab&`, `"ab"`, a word of its own): a key of one or two characters is in nearly every word, and masking it
 * there made every log line unreadable (`under wa***`) while hiding nothing.
 */
const SHORT = 8;

/**
 * Letters, digits, `_` and `-`: a short key next to one of them is part of another word. Anything else bounds it, a
 * URL's `/`, `=`, `&` and `.` included, so that a short key in a URL's path or query is masked.
 */
const KEY_CHAR = '[A-Za-z0-9_\\-]';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The text with every key (the main one and the routes' own) replaced by `***`. */
export function redact(text: string, secrets: string | readonly string[]): string {
  let out = text;
  for (const s of typeof secrets === 'string' ? [secrets] : secrets) {
    if (!s) continue;
    if (s.length >= SHORT) out = out.split(s).join('***');
    else out = out.replace(new RegExp(`(?<!${KEY_CHAR})${escapeRegExp(s)}(?!${KEY_CHAR})`, 'g'), '***');
  }
  return out;
}
