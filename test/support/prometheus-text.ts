/** Reading Prometheus' text format back in tests, by a parser of the tests' own (not prom-client's). */

/** The samples of a Prometheus text: `name{a="x",b="y"}` (labels sorted by name) to value; `+Inf` is Infinity. */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z0-9_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z0-9_]+)="((?:[^"\\]|\\.)*)"/g)]
      .map((l) => `${l[1]}="${l[2]}"`)
      .sort();
    const v = m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]);
    out.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, v);
  }
  return out;
}
