/**
 * The largest and the smallest number of a list of any length. `Math.max` over a spread list passes every element as an argument
 * on the stack, and past about 100,000 of them throws "Maximum call stack size exceeded"; these loop. Like `Math.max`
 * and `Math.min`: NaN if any element is NaN, -Infinity and Infinity for an empty list.
 */

/** The largest of `xs` (-Infinity when there is none). */
export function maxOf(xs: Iterable<number>): number {
  let m = Number.NEGATIVE_INFINITY;
  for (const x of xs) m = Math.max(m, x);
  return m;
}

/** The smallest of `xs` (Infinity when there is none). */
export function minOf(xs: Iterable<number>): number {
  let m = Number.POSITIVE_INFINITY;
  for (const x of xs) m = Math.min(m, x);
  return m;
}
