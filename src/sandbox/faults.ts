/** Fault injection and rate limiting: seeded, so a run with the same settings meets the same faults. */
import { UsageError } from '../errors.ts';

/** Kinds of injected fault, in the order they are drawn. */
export const FAULT_KINDS = ['reset', 'timeout', 'http500', 'truncate', 'graphql', 'indexing', 'burst429'] as const;
/** One fault kind. */
export type FaultKind = (typeof FAULT_KINDS)[number];
/** Probability of each fault per data request (0..1). */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** Requests refused with 429 after a `burst429` fault. */
const BURST_LENGTH = 8;

/** Parses `http500=0.05,timeout=0.02` into rates, with an error naming the valid kinds. */
export function parseFaults(spec: string): FaultRates {
  const rates: FaultRates = {};
  if (!spec.trim()) return rates;
  for (const part of spec.split(',')) {
    const [k, v] = part.split('=').map((s) => s.trim());
    if (!FAULT_KINDS.includes(k as FaultKind))
      throw new UsageError(`unknown fault "${k}" in --faults; valid kinds: ${FAULT_KINDS.join(', ')}`);
    const rate = Number(v);
    if (!(rate >= 0 && rate <= 1))
      throw new UsageError(`fault rate for "${k}" must be a number from 0 to 1, but is "${v}"`);
    rates[k as FaultKind] = rate;
  }
  return rates;
}

/** Draws faults per request from a seeded generator (mulberry32). */
export class FaultPlan {
  private state: number;
  private burstLeft = 0;

  constructor(
    public rates: FaultRates,
    seed: number,
  ) {
    this.state = seed >>> 0;
  }

  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** The fault for the next data request, or undefined. */
  draw(): FaultKind | 'burst429' | undefined {
    if (this.burstLeft > 0) {
      this.burstLeft--;
      return 'burst429';
    }
    for (const kind of FAULT_KINDS) {
      const rate = this.rates[kind] ?? 0;
      if (rate > 0 && this.next() < rate) {
        if (kind === 'burst429') this.burstLeft = BURST_LENGTH - 1;
        return kind;
      }
    }
    return undefined;
  }
}

/** A token bucket of `rate` requests per second with one second of burst. */
export class RateLimiter {
  private tokens: number;
  private last = performance.now();

  constructor(public rate: number) {
    this.tokens = rate;
  }

  /** 0 when the request may pass, else the seconds to wait before a token is free. */
  take(): number {
    if (this.rate <= 0) return 0;
    const now = performance.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return (1 - this.tokens) / this.rate;
  }
}
