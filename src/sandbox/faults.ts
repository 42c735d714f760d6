/** Fault injection and rate limiting: seeded, so a run with the same settings meets the same faults. */
import { UsageError } from '../errors.ts';
import type { Row } from './table.ts';

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

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** Draws faults per request from a seeded generator. */
export class FaultPlan {
  private readonly random: SeededRandom;
  private burstLeft = 0;

  constructor(
    public rates: FaultRates,
    seed: number,
  ) {
    this.random = new SeededRandom(seed);
  }

  private next(): number {
    return this.random.next();
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

/** One row an answer left out silently (`SilentDrop`). */
export interface DroppedRow {
  /** The chain's id and the deployment's id. */
  readonly chainId: number;
  readonly deployment: string;
  readonly entity: string;
  /** The row as the sandbox holds it (its `__` fields left out). */
  readonly row: Record<string, unknown>;
  /** Whether a later answer held it after all (then it was not lost). */
  servedLater: boolean;
}

/**
 * Rows lost silently: each row a collection answer of an entity in `entities` (every entity, when empty) would hold is
 * left out of that answer with probability `rate`, the next row taken in its place, so that the page stays full and
 * valid while the counters the upstream keeps still count the row. Another answer may hold it (each answer draws
 * anew): every row left out is listed, with whether a later answer held it, for the tests' oracle.
 */
export class SilentDrop {
  rate = 0;
  entities: ReadonlySet<string> = new Set();
  readonly dropped: DroppedRow[] = [];
  /** The rows left out and not served since, by deployment, entity and id. */
  private readonly pending = new Map<string, DroppedRow>();
  private readonly random: SeededRandom;

  constructor(seed: number) {
    this.random = new SeededRandom(seed ^ 0x5eed);
  }

  /** Sets the rate (0..1) and the entities, with an error naming a bad value. */
  configure(rate: unknown, entities: unknown): void {
    const r = Number(rate);
    if (!(r >= 0 && r <= 1)) throw new UsageError(`silentDrop must be a number from 0 to 1, but is "${String(rate)}"`);
    if (entities !== undefined && !(Array.isArray(entities) && entities.every((e) => typeof e === 'string')))
      throw new UsageError('silentDropEntities must be a list of entity names, such as ["Swap", "PairDayData"]');
    this.rate = r;
    if (entities !== undefined) this.entities = new Set(entities as string[]);
  }

  /** Forgets the rows left out so far; returns them. */
  forget(): DroppedRow[] {
    this.pending.clear();
    return this.dropped.splice(0);
  }

  /**
   * For one answer of a deployment: the omission test (none when nothing is dropped), and what to call with the rows
   * the answer holds (none when no row left out waits to be served again).
   */
  forAnswer(dep: { readonly id: string; readonly chainId: number }): {
    omit?: (entity: string, row: Row) => boolean;
    served?: (entity: string, rows: readonly Row[]) => void;
  } {
    const key = (entity: string, id: string) => JSON.stringify([dep.id, entity, id]);
    const served = (entity: string, rows: readonly Row[]) => {
      for (const r of rows) {
        const d = this.pending.get(key(entity, r.id));
        if (!d) continue;
        d.servedLater = true;
        this.pending.delete(key(entity, r.id));
      }
    };
    const omit = (entity: string, row: Row) => {
      if (this.entities.size > 0 && !this.entities.has(entity)) return false;
      if (this.random.next() >= this.rate) return false;
      const kept = Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('__')));
      const d: DroppedRow = { chainId: dep.chainId, deployment: dep.id, entity, row: kept, servedLater: false };
      this.dropped.push(d);
      this.pending.set(key(entity, row.id), d);
      return true;
    };
    return { ...(this.rate > 0 ? { omit } : {}), ...(this.pending.size > 0 || this.rate > 0 ? { served } : {}) };
  }
}
