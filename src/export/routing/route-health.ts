/**
 * Routes a run gave up on: a request to a route that ended its retries on a time-out or an unreachable host makes the
 * run's later requests to that route fail at once with the same error, rather than each spending its own attempts
 * (eight of `timeoutMs` each) on a route that has stopped answering. A task with a standby route moves there as after
 * its own retries; the others fail with the one message the summary groups. Keyed by route, not host: routes of one
 * host (a gateway's deployments) can fail apart, and a route's standby may share its host. The next run asks again.
 * (A host that does not answer from the start is found by the run's probes: `run-routes.ts`.)
 */
import { UpstreamError } from '../../errors.ts';

/** Failures that say the route, not the request, is the trouble. */
const ROUTE_KINDS: ReadonlySet<string> = new Set(['timeout', 'unreachable']);

/** What a person can do about a route given up: it answered the run's probe, so its address is right. */
const givenUpHint = (kind: string) =>
  `; the route stopped answering during the run and is given up until the next run: check the service's status${
    kind === 'timeout' ? ', or raise timeoutMs (config) if its answers are only slow' : ''
  }`;

/** The least time between two answers whose blocks give a route's pace. */
const PACE_SPAN_MS = 2000;

/** A block a route said it had indexed, and when (milliseconds). */
interface Seen {
  readonly n: number;
  readonly at: number;
}

export class RouteHealth {
  private readonly given = new Map<string, UpstreamError>();
  /** When each route last said on the terminal that a request of it waits. */
  private readonly faced = new Map<string, number>();
  /**
   * The first and the latest block each route's answers said it had indexed (`graph-indexed`), with when they came,
   * for every task of the run.
   */
  private readonly heads = new Map<string, { first: Seen; last: Seen }>();

  /**
   * Notes that route `url` has indexed block `n` (when given, at `now` in milliseconds) and returns the block it has
   * likely indexed by `now`: the latest seen, moved on at the pace seen between the first and the latest.
   */
  indexed(url: string, n: number | undefined, now: number): number | undefined {
    const was = this.heads.get(url);
    if (n !== undefined && (was === undefined || n > was.last.n))
      this.heads.set(url, { first: was?.first ?? { n, at: now }, last: { n, at: now } });
    const h = this.heads.get(url);
    if (!h) return undefined;
    // A pace seen over less than PACE_SPAN_MS is noise (an answer's own time on the way): the latest block alone.
    const span = h.last.at - h.first.at;
    const pace = span >= PACE_SPAN_MS ? (h.last.n - h.first.n) / span : 0;
    return h.last.n + Math.floor(pace * Math.max(0, now - h.last.at));
  }

  /**
   * Whether a request of the route `url` unanswered for a while should say so now: once per `everyMs` per route, so a
   * route the run's tasks wait on four at a time gives one line, not four.
   */
  faceDue(url: string, now: number, everyMs: number): boolean {
    const last = this.faced.get(url);
    if (last !== undefined && now - last < everyMs) return false;
    this.faced.set(url, now);
    return true;
  }

  /** The error the run gave the route `url` up with, as a failure not retried; undefined while it is not given up. */
  down(url: string): UpstreamError | undefined {
    const e = this.given.get(url);
    return e && new UpstreamError(e.message, { kind: e.kind, retryable: false, ...e.extra });
  }

  /**
   * A request to the route `url` ended its retries with `e`; returns the error to throw. A failure of the route gives
   * it up for this run, and it and every later failure of the route's requests read the same, with what to do, so a
   * summary shows them as one cause.
   */
  gaveUp(url: string, e: unknown): unknown {
    if (!(e instanceof UpstreamError && ROUTE_KINDS.has(e.kind))) return e;
    if (!this.given.has(url)) {
      // A new error with the hint: `e` may be held elsewhere (a retry's log line, a caller's own error), unchanged.
      const given = new UpstreamError(`${e.message}${givenUpHint(e.kind)}`, {
        kind: e.kind,
        retryable: e.retryable,
        ...e.extra,
      });
      this.given.set(url, given);
      return given;
    }
    return this.down(url);
  }
}
