/** Keys kept out of everything shown, logged or stored. */

/** The text with every key (the main one and the routes' own) replaced by `***`. */
export function redact(text: string, secrets: string | readonly string[]): string {
  let out = text;
  for (const s of typeof secrets === 'string' ? [secrets] : secrets) if (s) out = out.split(s).join('***');
  return out;
}
