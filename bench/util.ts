/** Small helpers of the benchmark suite's sections. */

/** The median of some figures (the upper of the two middle ones for an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Stops the suite when a command it runs fails, with the command's last output. */
export function must(r: { code: number | null; out: string }, what: string): void {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out.slice(-2000)}`);
}
