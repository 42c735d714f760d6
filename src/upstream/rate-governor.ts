/**
 * Finds and keeps to an upstream's request-rate limit without being told it.
 *
 * Until the first HTTP 429, requests go out as fast as the concurrency allows. A 429 means the limit was crossed:
 * the pace drops to the rate of requests the upstream accepted in the last second (while over the limit, that is the
 * limit itself) or to 90% of the current pace, whichever is lower. Then, every `probeEveryMs` without a 429, the pace
 * rises by `probeStep` (a fraction), so a limit that was raised, or first underestimated, is found again. Requests
 * are spaced evenly at the pace, never in bursts, so a token-bucket limiter upstream stays full.
 */

/** Settings of a governor. */
export interface GovernorOptions {
  /** Milliseconds without a 429 before each increase of the pace. */
  readonly probeEveryMs?: number;
  /** Fraction by which the pace increases at each probe. */
  readonly probeStep?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const WINDOW_MS = 1000;

/** The request pace of one upstream host. */
export class RateGovernor {
  /** Requests per second; Infinity until the first 429. */
  private pace = Infinity;
  private next = 0;
  private lastChange = 0;
  private readonly accepted: number[] = [];
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly probeEveryMs: number;
  private readonly probeStep: number;
  /** 429s seen, for the run summary. */
  limited = 0;

  constructor(opts: GovernorOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.probeEveryMs = opts.probeEveryMs ?? 4000;
    this.probeStep = opts.probeStep ?? 0.03;
  }

  /** The current pace in requests per second (Infinity before any 429). */
  get rate(): number {
    return this.pace;
  }

  /** Waits for this request's slot. */
  async acquire(): Promise<void> {
    if (this.pace === Infinity) return;
    const now = this.now();
    if (now - this.lastChange >= this.probeEveryMs) {
      this.pace *= 1 + this.probeStep;
      this.lastChange = now;
    }
    const at = Math.max(now, this.next);
    this.next = at + 1000 / this.pace;
    if (at > now) await this.sleep(at - now);
  }

  /** The upstream accepted a request. */
  onAccepted(): void {
    const now = this.now();
    this.accepted.push(now);
    while (this.accepted.length && this.accepted[0]! < now - WINDOW_MS) this.accepted.shift();
  }

  /** The upstream answered 429. */
  onRateLimited(): void {
    const now = this.now();
    this.limited++;
    // One decrease per window: the 429s of requests already in flight say nothing new.
    if (now - this.lastChange < WINDOW_MS && this.pace !== Infinity) return;
    while (this.accepted.length && this.accepted[0]! < now - WINDOW_MS) this.accepted.shift();
    const seen = this.accepted.length * (1000 / WINDOW_MS);
    const lower = this.pace === Infinity ? seen : this.pace * 0.9;
    this.pace = Math.max(0.5, Math.min(lower, seen || lower));
    this.lastChange = now;
    this.next = now + 1000 / this.pace;
  }
}
