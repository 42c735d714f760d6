/** Retries with exponential backoff and full jitter, honouring Retry-After; counts attempts for the run ledger. */
import { UpstreamError } from '../errors.ts';

/** First backoff step. */
const BASE_DELAY_MS = 250;
/** Longest wait between two attempts. */
const MAX_DELAY_MS = 15_000;

/** Options of one retried operation. */
export interface RetryOptions {
  readonly maxAttempts: number;
  /** Fewer attempts for some errors (a host that cannot be reached, when it is first tried). */
  readonly maxAttemptsFor?: (err: UpstreamError) => number;
  /** Called before each retry (for counters and logs). */
  readonly onRetry?: (err: UpstreamError, attempt: number, delayMs: number) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The wait before retry number `attempt` (1-based). */
export function backoffMs(err: UpstreamError, attempt: number, random: () => number): number {
  if (err.extra.retryAfterMs !== undefined) return Math.min(MAX_DELAY_MS * 4, err.extra.retryAfterMs + random() * 250);
  return Math.floor(random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt));
}

/** Runs `fn` until it succeeds, fails with a terminal error, or runs out of attempts. */
export async function withRetries<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      const budget =
        e instanceof UpstreamError
          ? Math.min(opts.maxAttempts, opts.maxAttemptsFor?.(e) ?? Infinity)
          : opts.maxAttempts;
      if (!(e instanceof UpstreamError) || !e.retryable || attempt >= budget) {
        if (e instanceof UpstreamError && e.retryable)
          e.message = `${e.message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`;
        throw e;
      }
      const delay = backoffMs(e, attempt, random);
      opts.onRetry?.(e, attempt, delay);
      await sleep(delay);
    }
  }
}
