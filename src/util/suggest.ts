/** "Did you mean": the known name closest to a mistyped one. */

/**
 * The edit distance between two strings: insertions, deletions, substitutions and swaps of two neighbours each cost
 * one (the optimal string alignment distance, so that `chian` is one edit from `chain`).
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, if it is close enough to be what was meant: one edit for a word of up to three
 * letters, else two or a third of its length, whichever is more. Ties go to the earlier candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (!best || d < best.d) best = { name: c, d };
  }
  const allowed = w.length <= 3 ? 1 : Math.max(2, Math.floor(w.length / 3));
  return best && best.d <= allowed ? best.name : undefined;
}
