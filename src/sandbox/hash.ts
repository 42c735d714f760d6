/** Deterministic integer hashing for data that is derived from its index instead of being stored. */

/** Mixes any number of 32-bit integers into one unsigned 32-bit value (murmur3 finalizer per step). */
export function mix(...parts: number[]): number {
  return mixAll(parts);
}

/** `mix` over an array (the rest array of a caller, passed on without copying: this runs several times per row). */
function mixAll(parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k]!;
    h = Math.imul(h ^ (p | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    // Fold the high part of values above 2^32 so that large indexes stay distinct.
    if (p > 0xffffffff || p < -0x80000000) h = mix(h, Math.floor(p / 0x100000000));
  }
  return h >>> 0;
}

/** A float in [0, 1) from the hash of the parts. */
export function unit(...parts: number[]): number {
  return mixAll(parts) / 0x100000000;
}

/** An integer in [0, n) from the hash of the parts. */
export function pick(n: number, ...parts: number[]): number {
  return Math.floor((mixAll(parts) / 0x100000000) * n);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Eight lowercase hex characters of a 32-bit value. */
export function hex32(v: number): string {
  return HEX[(v >>> 24) & 255]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! + HEX[v & 255]!;
}

/** The first word of a hash made by `hashWords(h, n)`: its first eight hex digits, and so the start of its order. */
export function firstWord(h: number): number {
  return mix(h, 0);
}

/**
 * A `0x` hash of 64 hex digits: six words derived from `h`, then two words that encode `n`, so that the number can be
 * recovered from the hash (`hashNumber`). No closures: this runs once per generated row.
 */
export function hashWords(h: number, n: number): string {
  const w0 = firstWord(h);
  const w1 = mix(h, 1);
  const w4 = mix(h, 4);
  const w5 = mix(h, 5);
  return (
    '0x' +
    hex32(w0) +
    hex32(w1) +
    hex32(mix(h, 2)) +
    hex32(mix(h, 3)) +
    hex32(w4) +
    hex32(w5) +
    hex32((Math.floor(n / 0x100000000) ^ mix(w0, w5)) >>> 0) +
    hex32((n ^ mix(w1, w4)) >>> 0)
  );
}

/** The number encoded in a hash made by `hashWords` (`0x` and 64 lowercase hex digits), or -1 for any other text. */
export function hashNumber(hash: string): number {
  if (!/^0x[0-9a-f]{64}$/.test(hash)) return -1;
  const word = (k: number) => parseInt(hash.slice(2 + 8 * k, 10 + 8 * k), 16);
  const hi = (word(6) ^ mix(word(0), word(5))) >>> 0;
  const lo = (word(7) ^ mix(word(1), word(4))) >>> 0;
  return hi * 0x100000000 + lo;
}

/** A `0x`-prefixed lowercase hex string of `words` 32-bit words derived from the parts. */
export function hexOf(words: number, ...parts: number[]): string {
  let s = '0x';
  for (let w = 0; w < words; w++) s += hex32(mix(...parts, w));
  return s;
}

/** FNV-1a of a string, for seeding from names. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
